package rpcctl

import "fmt"

// APIError is a non-2xx answer of the API.
type APIError struct {
	// StatusCode is the HTTP status.
	StatusCode int
	// Message is the API's "error" string, or a summary of the body when it has none.
	Message string
	// Body is the raw response body.
	Body []byte
	// RetryAfter is the Retry-After header in seconds, 0 when absent.
	RetryAfter int
	// Reason is the X-Rpcctl-Reason header of an authentication failure ("replayed",
	// "bad_signature", ...), "" when absent.
	Reason string
}

func (e *APIError) Error() string { return fmt.Sprintf("rpcctl: HTTP %d: %s", e.StatusCode, e.Message) }

// Code is a stable name of the kind of failure, as in the other rpcctl libraries:
// E_NOT_FOUND (404), E_VALIDATION (400), E_RATE_LIMIT (429), E_AUTH (401, 403),
// E_REPLAYED (a 401 for a signed request sent twice), else E_API.
func (e *APIError) Code() string {
	if e.Reason == "replayed" {
		return "E_REPLAYED"
	}
	switch e.StatusCode {
	case 401, 403:
		return "E_AUTH"
	case 404:
		return "E_NOT_FOUND"
	case 400:
		return "E_VALIDATION"
	case 429:
		return "E_RATE_LIMIT"
	}
	return "E_API"
}

// NetworkError means the request got no HTTP answer: refused, reset or timed out.
type NetworkError struct {
	BaseURL string
	Err     error
}

func (e *NetworkError) Error() string {
	return fmt.Sprintf("rpcctl: cannot reach %s: %v", e.BaseURL, e.Err)
}
func (e *NetworkError) Unwrap() error { return e.Err }

// ConfigError is a missing or malformed setting (key, secret, base URL).
type ConfigError struct{ Message string }

func (e *ConfigError) Error() string { return "rpcctl: " + e.Message }

// WebhookError is a webhook delivery that failed verification.
type WebhookError struct {
	// Reason says why: missing X-Signature, missing or invalid X-Timestamp,
	// timestamp outside tolerance, signature mismatch, body is not a JSON object.
	Reason string
}

func (e *WebhookError) Error() string { return "rpcctl: webhook refused: " + e.Reason }
