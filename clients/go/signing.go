package rpcctl

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// SHA256Hex is the lowercase hex SHA-256 of body.
func SHA256Hex(body []byte) string {
	sum := sha256.Sum256(body)
	return hex.EncodeToString(sum[:])
}

// SignedPath is the part of a request target that is signed: the path, without scheme,
// host, query or fragment.
func SignedPath(target string) string {
	if strings.Contains(target, "://") {
		if u, err := url.Parse(target); err == nil {
			target = u.EscapedPath()
		}
	}
	if i := strings.IndexAny(target, "?#"); i >= 0 {
		target = target[:i]
	}
	return target
}

// CanonicalString is "{timestamp}\n{METHOD}\n{/v1/path}\n{hex sha256 of body}".
func CanonicalString(timestamp int64, method, path string, body []byte) string {
	return strconv.FormatInt(timestamp, 10) + "\n" + strings.ToUpper(method) + "\n" + SignedPath(path) + "\n" + SHA256Hex(body)
}

// Sign is the lowercase hex HMAC-SHA256 of the canonical string, keyed with secret.
// body must be exactly the bytes sent: re-serialising JSON after signing breaks it.
func Sign(secret string, timestamp int64, method, path string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(CanonicalString(timestamp, method, path, body)))
	return hex.EncodeToString(mac.Sum(nil))
}

// Verify reports whether signature is the signature of this request, in constant time.
func Verify(secret string, timestamp int64, method, path string, body []byte, signature string) bool {
	return SafeEqual(Sign(secret, timestamp, method, path, body), signature)
}

// SafeEqual compares two signatures in constant time.
func SafeEqual(expected, received string) bool {
	return subtle.ConstantTimeCompare([]byte(expected), []byte(received)) == 1
}

// SignRequest sets X-Api-Key, X-Timestamp and X-Signature on req for body, which must be
// the exact bytes of req's body. Use it to send signed requests with your own http.Client.
func SignRequest(req *http.Request, apiKey, secret string, body []byte) {
	ts := time.Now().Unix()
	req.Header.Set("X-Api-Key", apiKey)
	req.Header.Set("X-Timestamp", strconv.FormatInt(ts, 10))
	req.Header.Set("X-Signature", Sign(secret, ts, req.Method, req.URL.EscapedPath(), body))
}
