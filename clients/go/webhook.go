package rpcctl

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// DefaultWebhookTolerance is how far a delivery's X-Timestamp may be from now.
const DefaultWebhookTolerance = 300 * time.Second

// SignWebhook is the X-Signature the service sends: hex HMAC-SHA256 of "{timestamp}.{body}".
func SignWebhook(secret string, timestamp string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(timestamp + "."))
	mac.Write(body)
	return hex.EncodeToString(mac.Sum(nil))
}

// WebhookOptions tune VerifyWebhook. The zero value uses DefaultWebhookTolerance and the clock.
type WebhookOptions struct {
	// Tolerance is the largest accepted distance between X-Timestamp and now; negative disables the check.
	Tolerance time.Duration
	// Now replaces the clock (tests).
	Now func() time.Time
}

// VerifyWebhook returns a *WebhookError unless signature is the service's signature of body at
// timestamp and timestamp is within the tolerance. body is the raw request body.
func VerifyWebhook(secret, timestamp, signature string, body []byte, opts WebhookOptions) error {
	if signature == "" {
		return &WebhookError{Reason: "missing X-Signature"}
	}
	ts, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil || ts < 0 || strings.TrimLeft(timestamp, "0123456789") != "" {
		return &WebhookError{Reason: "missing or invalid X-Timestamp"}
	}
	tolerance := opts.Tolerance
	if tolerance == 0 {
		tolerance = DefaultWebhookTolerance
	}
	if tolerance > 0 {
		now := time.Now()
		if opts.Now != nil {
			now = opts.Now()
		}
		skew := now.Unix() - ts
		if skew < 0 {
			skew = -skew
		}
		if time.Duration(skew)*time.Second > tolerance {
			return &WebhookError{Reason: "timestamp outside tolerance"}
		}
	}
	expected := SignWebhook(secret, timestamp, body)
	if !SafeEqual(expected, strings.ToLower(strings.TrimSpace(signature))) {
		return &WebhookError{Reason: "signature mismatch"}
	}
	return nil
}

// WebhookEvent is a delivery's flat JSON body. Raw keeps every field, including those of
// payment orders and any added later.
//
// On every family: Token is the ERC-20/TRC-20 contract, Stellar CODE:ISSUER or Solana SPL mint
// (nil for the native coin); Amount a raw integer in the smallest unit (wei, sat, sun, stroops,
// lamports); TxHash the transaction hash, on Solana its signature; BlockHeight the block number,
// Stellar ledger or Solana slot.
type WebhookEvent struct {
	ID           string   `json:"id"`
	Type         string   `json:"type"`
	Network      string   `json:"network"`
	BlockHeight  int64    `json:"block_height"`
	BlockHash    string   `json:"block_hash"`
	CreatedAt    string   `json:"created_at"`
	WatchID      string   `json:"watch_id,omitempty"`
	Address      string   `json:"address,omitempty"`
	TxHash       string   `json:"tx_hash,omitempty"`
	Direction    string   `json:"direction,omitempty"`
	From         *string  `json:"from,omitempty"`
	To           *string  `json:"to,omitempty"`
	Token        *string  `json:"token,omitempty"`
	Amount       string   `json:"amount,omitempty"`
	LogIndex     *int64   `json:"log_index,omitempty"`
	TxCount      int      `json:"tx_count,omitempty"`
	Transactions []string `json:"transactions,omitempty"`
	Test         bool     `json:"test,omitempty"`
	// Payment-order deliveries (type "payment_order") carry these.
	Product   string `json:"product,omitempty"`
	Event     string `json:"event,omitempty"`
	PaymentID string `json:"payment_id,omitempty"`
	OrderID   string `json:"order_id,omitempty"`
	AmountRaw string `json:"amount_raw,omitempty"`
	Status    string `json:"status,omitempty"`
	Lifecycle string `json:"lifecycle,omitempty"`
	// AML is nil on aml_check and set on paid.
	AML *AMLResult `json:"aml,omitempty"`
	// Reason says why a failed or expired order ended (canceled, aml_rejected, partial, late, reorg).
	Reason *string `json:"reason,omitempty"`
	Late   bool    `json:"late,omitempty"`
	// Overpaid is true on a paid order that received more than its amount.
	Overpaid bool `json:"overpaid,omitempty"`
	// Asset and AssetSymbol name what moved, on payment_order, refund and payout_line deliveries.
	Asset       string `json:"asset,omitempty"`
	AssetSymbol string `json:"asset_symbol,omitempty"`
	// Refund deliveries (type "refund", Event "refund.<status>") carry RefundID, and the order's
	// PaymentID and OrderID; payout deliveries (type "payout_line", Event "payout.<status>")
	// PayoutID and Line. Both carry Status, Address (empty while a refund has none), Amount in
	// units, AmountRaw, Reference, TxHash, BlockHeight and Lifecycle; ID is
	// "{refund_id or payout_id}_{line}_{sequence}".
	RefundID  string  `json:"refund_id,omitempty"`
	PayoutID  string  `json:"payout_id,omitempty"`
	Line      int     `json:"line,omitempty"`
	Reference *string `json:"reference,omitempty"`
	// Sequence grows by one per transition of the order or line; a payment order's ID is
	// "{payment_id}_{sequence}".
	Sequence int64                      `json:"sequence,omitempty"`
	Raw      map[string]json.RawMessage `json:"-"`
}

// AMLResult is the screening result of a payment order's senders; the worst one decides RiskLevel.
type AMLResult struct {
	Provider  string  `json:"provider"`
	Score     float64 `json:"score"`
	RiskLevel string  `json:"risk_level"`
	// Details lists every sender screened.
	Details []AMLDetail `json:"details"`
	// ReportURL is "" when the provider gives none.
	ReportURL string `json:"report_url"`
	CheckedAt string `json:"checked_at"`
}

// AMLDetail is one finding of a screening.
type AMLDetail struct {
	Category string `json:"category"`
	Address  string `json:"address"`
	Source   string `json:"source"`
}

// ConstructEvent verifies a delivery from its headers and raw body and parses the event.
func ConstructEvent(body []byte, header http.Header, secret string, opts WebhookOptions) (*WebhookEvent, error) {
	if err := VerifyWebhook(secret, header.Get("X-Timestamp"), header.Get("X-Signature"), body, opts); err != nil {
		return nil, err
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(body, &raw); err != nil || raw == nil {
		return nil, &WebhookError{Reason: "body is not a JSON object"}
	}
	var event WebhookEvent
	if err := json.Unmarshal(body, &event); err != nil {
		return nil, &WebhookError{Reason: fmt.Sprintf("body does not match the event shape: %v", err)}
	}
	event.Raw = raw
	return &event, nil
}

// ReadWebhook reads r's body (at most 1 MiB) and returns ConstructEvent's result: the whole
// verification of an incoming *http.Request in one call.
func ReadWebhook(r *http.Request, secret string, opts WebhookOptions) (*WebhookEvent, error) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		return nil, &WebhookError{Reason: "cannot read body: " + err.Error()}
	}
	return ConstructEvent(body, r.Header, secret, opts)
}
