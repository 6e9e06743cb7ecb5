package rpcctl

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestWebhookVectors(t *testing.T) {
	var cases []webhookCase
	loadCases(t, "webhook-signatures.json", &cases)
	types := map[string]bool{}
	for _, v := range cases {
		var head struct{ Type string }
		_ = json.Unmarshal([]byte(v.Body), &head)
		types[head.Type] = true
	}
	if !types["refund"] || !types["payout_line"] {
		t.Fatalf("no refund or payout_line vector: %v", types)
	}
	if len(cases) < 3 {
		t.Fatalf("only %d vectors", len(cases))
	}
	for _, v := range cases {
		t.Run(v.Name, func(t *testing.T) {
			ts := strconv.FormatInt(v.Timestamp, 10)
			if got := SignWebhook(v.Secret, ts, []byte(v.Body)); got != v.Signature {
				t.Errorf("signature %s, want %s", got, v.Signature)
			}
			at := func() time.Time { return time.Unix(v.Timestamp, 0) }
			if err := VerifyWebhook(v.Secret, ts, v.Signature, []byte(v.Body), WebhookOptions{Now: at}); err != nil {
				t.Error(err)
			}
			h := http.Header{}
			h.Set("x-timestamp", ts)
			h.Set("X-SIGNATURE", v.Signature)
			event, err := ConstructEvent([]byte(v.Body), h, v.Secret, WebhookOptions{Now: at})
			if err != nil {
				t.Fatal(err)
			}
			if event.Type == "" || len(event.Raw) == 0 {
				t.Errorf("event not parsed: %+v", event)
			}
			if event.Type == "payment_order" && (event.Product != "payments" || event.AML == nil || event.AML.Score != 12 || event.OrderID != "заказ-42") {
				t.Errorf("payment order not parsed: %+v %+v", event, event.AML)
			}
			if event.Type == "refund" && (event.Event != "refund.awaiting_payment" || event.RefundID != "rf_Q9xA2b3C4d5E6f7G" || event.PaymentID != "pay_4fQm0v2ZJr6Lk1dC" ||
				event.OrderID != "1042" || event.Status != "awaiting_payment" || event.AssetSymbol != "ETH" || event.Reference != nil || event.TxHash != "" || event.Sequence != 1) {
				t.Errorf("refund not parsed: %+v", event)
			}
			if event.Type == "payout_line" && (event.Event != "payout.completed" || event.PayoutID != "po_Z1y2X3w4V5u6T7s8" || event.Line != 2 || event.Status != "completed" ||
				event.Amount != "1.5" || event.AmountRaw != "150000000" || event.Reference == nil || *event.Reference != "invoice-77" || event.BlockHeight != 2800123) {
				t.Errorf("payout line not parsed: %+v", event)
			}
		})
	}
}

func TestWebhookRefusals(t *testing.T) {
	var cases []webhookCase
	loadCases(t, "webhook-signatures.json", &cases)
	v := cases[0]
	ts := strconv.FormatInt(v.Timestamp, 10)
	at := func(d int64) WebhookOptions {
		return WebhookOptions{Now: func() time.Time { return time.Unix(v.Timestamp+d, 0) }}
	}
	body := []byte(v.Body)
	for reason, err := range map[string]error{
		"signature mismatch":             VerifyWebhook(v.Secret, ts, v.Signature, []byte(strings.Replace(v.Body, "19000000", "19000001", 1)), at(0)),
		"missing X-Signature":            VerifyWebhook(v.Secret, ts, "", body, at(0)),
		"missing or invalid X-Timestamp": VerifyWebhook(v.Secret, "12a", v.Signature, body, at(0)),
		"timestamp outside tolerance":    VerifyWebhook(v.Secret, ts, v.Signature, body, at(301)),
	} {
		var werr *WebhookError
		if !errors.As(err, &werr) || werr.Reason != reason {
			t.Errorf("want %q, got %v", reason, err)
		}
	}
	if VerifyWebhook("whsec_wrong", ts, v.Signature, body, at(0)) == nil {
		t.Error("a wrong secret verified")
	}
	if err := VerifyWebhook(v.Secret, ts, v.Signature, body, WebhookOptions{Tolerance: -1, Now: func() time.Time { return time.Unix(0, 0) }}); err != nil {
		t.Errorf("a negative tolerance must disable the freshness check: %v", err)
	}
	if err := VerifyWebhook(v.Secret, ts, v.Signature, body, at(299)); err != nil {
		t.Errorf("within tolerance: %v", err)
	}
}
