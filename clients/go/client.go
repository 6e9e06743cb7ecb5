package rpcctl

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DefaultBaseURL is used when neither Options.BaseURL nor PUBLIC_API_BASE is set.
const DefaultBaseURL = "http://127.0.0.1:8080"

// Options configure a Client. Empty APIKey, Secret and BaseURL come from PUBLIC_API_KEY,
// PUBLIC_API_SECRET and PUBLIC_API_BASE.
type Options struct {
	APIKey  string
	Secret  string
	BaseURL string
	// HTTPClient sends the requests; nil means a client with Timeout that does not follow redirects.
	HTTPClient *http.Client
	// Timeout bounds each attempt of a request; 0 means 30 seconds.
	Timeout time.Duration
	// MaxRetries bounds the retries of a 429 and, for GET/PUT/DELETE, of connection errors;
	// 0 means 3, negative means none.
	MaxRetries int
	// MaxRetryAfter is the longest Retry-After that is waited out; 0 means 30 seconds.
	MaxRetryAfter time.Duration
	UserAgent     string
}

// Client is a signed client of the Public API; safe for concurrent use.
//
// The service takes each signature of a mutating request once. The Client sends an identical
// request again (a retry, or your code repeating the same body) with the next second's
// signature, waiting for that second, and re-signs once more when the service answers
// 401 "Invalid signature." with X-Rpcctl-Reason: replayed because another process sent those
// bytes in that second.
type Client struct {
	BaseURL string
	// AddressWatch holds the Address Watch routes.
	AddressWatch *AddressWatchService
	// Payments holds the payment order routes.
	Payments *PaymentsService
	// Refunds holds the refund routes of payment orders.
	Refunds *RefundsService
	// Payouts holds the payout routes (a refund's "rf_" id works there too).
	Payouts *PayoutsService

	apiKey        string
	secret        string
	http          *http.Client
	maxRetries    int
	maxRetryAfter time.Duration
	userAgent     string
	// now and wait are the clock and the sleep; tests replace them.
	now  func() time.Time
	wait func(ctx context.Context, d time.Duration) error

	sentMu     sync.Mutex
	sentSecond int64
	sent       map[string]struct{}
}

// replayed is the X-Rpcctl-Reason of the API's answer to a mutating signature it has already
// taken (its message, "Invalid signature.", is also that of a wrong signature).
const replayed = "replayed"

// NewClient returns a Client, or a *ConfigError when the key, secret or base URL is missing
// or malformed.
func NewClient(opts Options) (*Client, error) {
	c := &Client{
		apiKey:        firstNonEmpty(opts.APIKey, os.Getenv("PUBLIC_API_KEY")),
		secret:        firstNonEmpty(opts.Secret, os.Getenv("PUBLIC_API_SECRET")),
		BaseURL:       strings.TrimRight(firstNonEmpty(opts.BaseURL, os.Getenv("PUBLIC_API_BASE"), DefaultBaseURL), "/"),
		maxRetries:    opts.MaxRetries,
		maxRetryAfter: opts.MaxRetryAfter,
		userAgent:     firstNonEmpty(opts.UserAgent, "rpcctl-go/0.1.0"),
		http:          opts.HTTPClient,
		now:           time.Now,
		wait:          sleep,
		sent:          map[string]struct{}{},
	}
	if c.apiKey == "" {
		return nil, &ConfigError{Message: "API key is required: set Options.APIKey or PUBLIC_API_KEY"}
	}
	if c.secret == "" {
		return nil, &ConfigError{Message: "API secret is required: set Options.Secret or PUBLIC_API_SECRET"}
	}
	if u, err := url.Parse(c.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, &ConfigError{Message: fmt.Sprintf("base URL must be http(s)://host...: %q", c.BaseURL)}
	}
	if c.maxRetries == 0 {
		c.maxRetries = 3
	} else if c.maxRetries < 0 {
		c.maxRetries = 0
	}
	if c.maxRetryAfter == 0 {
		c.maxRetryAfter = 30 * time.Second
	}
	if c.http == nil {
		timeout := opts.Timeout
		if timeout == 0 {
			timeout = 30 * time.Second
		}
		c.http = &http.Client{
			Timeout: timeout,
			// A redirect would resend the signed request elsewhere; report the 3xx instead.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
	}
	c.AddressWatch = &AddressWatchService{c: c}
	c.Payments = &PaymentsService{c: c}
	c.Refunds = &RefundsService{c: c}
	c.Payouts = &PayoutsService{c: c}
	return c, nil
}

// String never shows the secret.
func (c *Client) String() string {
	return fmt.Sprintf("rpcctl.Client{BaseURL: %q, APIKey: %q}", c.BaseURL, c.apiKey)
}

func firstNonEmpty(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}

func idempotent(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPut, http.MethodDelete, http.MethodOptions:
		return true
	}
	return false
}

// replayable methods may be sent with the same signature more than once.
func replayable(method string) bool {
	return method == http.MethodGet || method == http.MethodHead || method == http.MethodOptions
}

// sign returns the timestamp and signature of a request, waiting for the next second when this
// very mutating request was already sent in the current one.
func (c *Client) sign(ctx context.Context, method, path string, body []byte) (int64, string, error) {
	now := c.now()
	ts := now.Unix()
	signature := Sign(c.secret, ts, method, path, body)
	if replayable(method) || !c.sentThisSecond(signature, ts) {
		return ts, signature, nil
	}
	if err := c.wait(ctx, untilNextSecond(now)); err != nil {
		return 0, "", err
	}
	ts = c.now().Unix()
	signature = Sign(c.secret, ts, method, path, body)
	c.sentThisSecond(signature, ts)
	return ts, signature, nil
}

// sentThisSecond records a mutating signature; true when it was already sent in second ts.
func (c *Client) sentThisSecond(signature string, ts int64) bool {
	c.sentMu.Lock()
	defer c.sentMu.Unlock()
	if ts != c.sentSecond {
		c.sentSecond = ts
		c.sent = map[string]struct{}{}
	}
	if _, ok := c.sent[signature]; ok {
		return true
	}
	c.sent[signature] = struct{}{}
	return false
}

// untilNextSecond lasts a few milliseconds past the next second's boundary, so the next
// timestamp is surely later.
func untilNextSecond(now time.Time) time.Duration {
	return time.Second - time.Duration(now.Nanosecond()) + 5*time.Millisecond
}

// Do sends a signed request and decodes a 2xx JSON answer into out (when not nil).
// body may be nil, []byte or string (sent and signed exactly as given), or any value that is
// JSON-encoded once. A non-2xx answer is an *APIError; no answer is a *NetworkError.
func (c *Client) Do(ctx context.Context, method, path string, query url.Values, body interface{}, out interface{}) error {
	method = strings.ToUpper(method)
	var data []byte
	switch b := body.(type) {
	case nil:
	case []byte:
		data = b
	case string:
		data = []byte(b)
	default:
		var err error
		if data, err = json.Marshal(b); err != nil {
			return fmt.Errorf("rpcctl: encode request body: %w", err)
		}
	}
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	target := c.BaseURL + path
	if encoded := query.Encode(); encoded != "" {
		target += "?" + encoded
	}
	u, err := url.Parse(target)
	if err != nil {
		return fmt.Errorf("rpcctl: bad request URL %q: %w", target, err)
	}
	signed := u.EscapedPath()

	resigned := false
	for attempt := 0; ; attempt++ {
		ts, signature, err := c.sign(ctx, method, signed, data)
		if err != nil {
			return err
		}
		req, err := http.NewRequestWithContext(ctx, method, target, bytes.NewReader(data))
		if err != nil {
			return fmt.Errorf("rpcctl: %w", err)
		}
		if len(data) == 0 {
			req.Body, req.GetBody, req.ContentLength = http.NoBody, nil, 0
		} else {
			req.Header.Set("Content-Type", "application/json")
		}
		req.Header.Set("X-Api-Key", c.apiKey)
		req.Header.Set("X-Timestamp", strconv.FormatInt(ts, 10))
		req.Header.Set("X-Signature", signature)
		req.Header.Set("Accept", "application/json")
		req.Header.Set("User-Agent", c.userAgent)

		res, err := c.http.Do(req)
		var text []byte
		if err == nil {
			text, err = io.ReadAll(res.Body)
			res.Body.Close()
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if idempotent(method) && attempt < c.maxRetries {
				if err := c.wait(ctx, backoff(attempt)); err != nil {
					return err
				}
				continue
			}
			return &NetworkError{BaseURL: c.BaseURL, Err: err}
		}
		reason := res.Header.Get("X-Rpcctl-Reason")
		if res.StatusCode == http.StatusUnauthorized && !replayable(method) && !resigned && reason == replayed {
			// Another process may have sent these very bytes in this second (a wrong signature says bad_signature).
			resigned = true
			attempt--
			if err := c.wait(ctx, untilNextSecond(c.now())); err != nil {
				return err
			}
			continue
		}
		retryAfter := parseRetryAfter(res.Header.Get("Retry-After"))
		if res.StatusCode == http.StatusTooManyRequests && attempt < c.maxRetries {
			wait := time.Duration(retryAfter) * time.Second
			if retryAfter <= 0 {
				wait = time.Second
			}
			if wait <= c.maxRetryAfter {
				if err := c.wait(ctx, wait); err != nil {
					return err
				}
				continue
			}
		}
		if res.StatusCode < 200 || res.StatusCode > 299 {
			return toAPIError(res.StatusCode, text, retryAfter, reason)
		}
		if out == nil || len(text) == 0 {
			return nil
		}
		if err := json.Unmarshal(text, out); err != nil {
			return fmt.Errorf("rpcctl: decode %s %s answer: %w", method, path, err)
		}
		return nil
	}
}

func toAPIError(status int, body []byte, retryAfter int, reason string) *APIError {
	var envelope struct {
		Error *string `json:"error"`
	}
	message := fmt.Sprintf("HTTP %d", status)
	if json.Unmarshal(body, &envelope) == nil && envelope.Error != nil {
		message = *envelope.Error
	} else if len(body) > 0 {
		text := string(body)
		if len(text) > 200 {
			text = text[:200]
		}
		message += ": " + text
	}
	return &APIError{StatusCode: status, Message: message, Body: body, RetryAfter: retryAfter, Reason: reason}
}

// parseRetryAfter reads seconds or an HTTP date; 0 when absent or unreadable.
func parseRetryAfter(v string) int {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil && f >= 0 {
		n := int(f)
		if float64(n) < f {
			n++
		}
		if n < 1 {
			n = 1
		}
		return n
	}
	if t, err := http.ParseTime(v); err == nil {
		n := int(time.Until(t).Seconds() + 0.999)
		if n < 1 {
			n = 1
		}
		return n
	}
	return 0
}

func backoff(attempt int) time.Duration {
	d := 200 * time.Millisecond << attempt
	if d > 2*time.Second || d <= 0 {
		d = 2 * time.Second
	}
	return time.Duration(float64(d) * (0.8 + rand.Float64()*0.4))
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// IsNotFound reports whether err is an *APIError with status 404.
func IsNotFound(err error) bool {
	var apiErr *APIError
	return errors.As(err, &apiErr) && apiErr.StatusCode == http.StatusNotFound
}

func daysQuery(days int) url.Values {
	if days == 0 {
		return nil
	}
	return url.Values{"days": {strconv.Itoa(days)}}
}

// Account is GET /v1/account: the plan and this month's usage.
func (c *Client) Account(ctx context.Context) (*Account, error) {
	var out Account
	return &out, c.Do(ctx, http.MethodGet, "/v1/account", nil, nil, &out)
}

// AccountUsage is GET /v1/account/usage; days is 7, 30 or 90, or 0 for the default.
func (c *Client) AccountUsage(ctx context.Context, days int) (*Usage, error) {
	var out struct{ Usage Usage }
	return &out.Usage, c.Do(ctx, http.MethodGet, "/v1/account/usage", daysQuery(days), nil, &out)
}

// ListEndpoints is GET /v1/endpoints.
func (c *Client) ListEndpoints(ctx context.Context) ([]Endpoint, error) {
	var out struct{ Endpoints []Endpoint }
	return out.Endpoints, c.Do(ctx, http.MethodGet, "/v1/endpoints", nil, nil, &out)
}

// AvailableNetworks is GET /v1/endpoints/available-networks.
func (c *Client) AvailableNetworks(ctx context.Context) (*AvailableNetworks, error) {
	var out AvailableNetworks
	return &out, c.Do(ctx, http.MethodGet, "/v1/endpoints/available-networks", nil, nil, &out)
}

// CreateEndpoint is POST /v1/endpoints; it counts against the plan's endpoints_limit.
func (c *Client) CreateEndpoint(ctx context.Context, in CreateEndpointInput) (*Endpoint, error) {
	var out struct{ Endpoint Endpoint }
	return &out.Endpoint, c.Do(ctx, http.MethodPost, "/v1/endpoints", nil, in, &out)
}

// GetEndpoint is GET /v1/endpoints/{id}.
func (c *Client) GetEndpoint(ctx context.Context, id int64) (*Endpoint, error) {
	var out struct{ Endpoint Endpoint }
	return &out.Endpoint, c.Do(ctx, http.MethodGet, fmt.Sprintf("/v1/endpoints/%d", id), nil, nil, &out)
}

// RenameEndpoint is PATCH /v1/endpoints/{id}: a new name (names need not be unique).
func (c *Client) RenameEndpoint(ctx context.Context, id int64, name string) (*Endpoint, error) {
	var out struct{ Endpoint Endpoint }
	body := map[string]string{"name": name}
	return &out.Endpoint, c.Do(ctx, http.MethodPatch, fmt.Sprintf("/v1/endpoints/%d", id), nil, body, &out)
}

// SetEndpointStatus is PATCH /v1/endpoints/{id}/status: StatusPaused stops its traffic, StatusActive resumes it.
func (c *Client) SetEndpointStatus(ctx context.Context, id int64, status string) (*Endpoint, error) {
	var out struct{ Endpoint Endpoint }
	body := map[string]string{"status": status}
	return &out.Endpoint, c.Do(ctx, http.MethodPatch, fmt.Sprintf("/v1/endpoints/%d/status", id), nil, body, &out)
}

// SetAllowedIPs is PATCH /v1/endpoints/{id}/allowed-ips: it replaces the list; empty allows every IP.
func (c *Client) SetAllowedIPs(ctx context.Context, id int64, ips []string) (*Endpoint, error) {
	if ips == nil {
		ips = []string{}
	}
	var out struct{ Endpoint Endpoint }
	body := map[string][]string{"allowed_ips": ips}
	return &out.Endpoint, c.Do(ctx, http.MethodPatch, fmt.Sprintf("/v1/endpoints/%d/allowed-ips", id), nil, body, &out)
}

// EndpointsUsage is GET /v1/endpoints/usage: usage over all endpoints; days 0 is the default.
func (c *Client) EndpointsUsage(ctx context.Context, days int) (*Usage, error) {
	var out struct{ Usage Usage }
	return &out.Usage, c.Do(ctx, http.MethodGet, "/v1/endpoints/usage", daysQuery(days), nil, &out)
}

// EndpointUsage is GET /v1/endpoints/{id}/usage; days 0 is the default.
func (c *Client) EndpointUsage(ctx context.Context, id int64, days int) (*Usage, error) {
	var out struct{ Usage Usage }
	return &out.Usage, c.Do(ctx, http.MethodGet, fmt.Sprintf("/v1/endpoints/%d/usage", id), daysQuery(days), nil, &out)
}
