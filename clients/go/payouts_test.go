package rpcctl

import (
	"context"
	"errors"
	"testing"
)

func TestRefundAndPayoutRoutes(t *testing.T) {
	refund := `{"refund_id":"rf_1","payment_id":"pay_1","order_id":"1042","amount_kind":"full","approval":"not_needed","status":"awaiting_address","address":null,"refund_link":{"url":"https://pay.example/refund/t","expires_at":"x","claimed":false}}`
	payout := `{"payout_id":"po_1","status":"awaiting_payment","approval":"awaiting","approval_reason":"role","lines":[{"line":1,"status":"awaiting_payment","address":"0xabc","amount":"1.25","reference":"inv-1","payment_request":{"uri":"ethereum:0xabc@1?value=1","qr_svg":null}}],"line_count":1}`
	canceled := `{"payout_id":"po_2","status":"canceled","lines":[],"line_count":1}`
	srv, got := scripted(t,
		reply{status: 200, body: `{"ok":true,"refund":` + refund + `}`},
		reply{status: 200, body: `{"ok":true,"refunds":[` + refund + `]}`},
		reply{status: 200, body: `{"ok":true,"payout":` + payout + `}`},
		reply{status: 200, body: `{"ok":true,"payouts":[` + payout + `,` + payout + `],"page":1,"per_page":2,"total":3}`},
		reply{status: 200, body: `{"ok":true,"payouts":[` + payout + `],"page":2,"per_page":2,"total":3}`},
		reply{status: 200, body: `{"ok":true,"payout":` + payout + `}`},
		reply{status: 200, body: `{"ok":true,"payout":` + payout + `}`},
		reply{status: 200, body: `{"ok":true,"payout":` + canceled + `}`},
		reply{status: 200, body: `{"ok":true,"psbt":"cHNidP8=","fee_raw":"141"}`},
		reply{status: 200, body: `{"ok":true,"payout":` + payout + `,"tx_hash":"ab"}`},
		reply{status: 409, body: `{"ok":false,"error":"po_1: every line has money on the way or arrived; nothing to cancel"}`},
	)
	c := newTestClient(t, srv.URL, Options{})
	ctx := context.Background()
	r, err := c.Refunds.Create(ctx, "pay_1", CreateRefundInput{Amount: "0.50", LinkExpiresIn: 3600})
	if err != nil || r.RefundID != "rf_1" || r.Address != nil || r.RefundLink == nil || *r.RefundLink.URL != "https://pay.example/refund/t" || r.Approval != "not_needed" {
		t.Fatalf("%v %+v", err, r)
	}
	if list, err := c.Refunds.List(ctx, "pay_1"); err != nil || len(list) != 1 || list[0].AmountKind != "full" {
		t.Fatalf("%v %+v", err, list)
	}
	p, err := c.Payouts.Create(ctx, []PayoutLineInput{{Network: "eth", Address: "0xabc", Amount: "1.25", Reference: "inv-1"}})
	if err != nil || p.Approval != "awaiting" || *p.ApprovalReason != "role" || len(p.Lines) != 1 || p.Lines[0].Line != 1 || *p.Lines[0].Reference != "inv-1" || p.Lines[0].PaymentRequest.URI != "ethereum:0xabc@1?value=1" {
		t.Fatalf("%v %+v", err, p)
	}
	var ids []string
	// The service filters: ForEach passes the status on and stops once it has read total.
	if err := c.Payouts.ForEach(ctx, ListPayoutsParams{Status: PayoutAwaitingPayment, PerPage: 2}, func(x Payout) error { ids = append(ids, x.PayoutID); return nil }); err != nil || len(ids) != 3 {
		t.Fatalf("%v: %v", err, ids)
	}
	if _, err := c.Payouts.Get(ctx, "po_1"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Payouts.Approve(ctx, "po_1"); err != nil {
		t.Fatal(err)
	}
	if x, err := c.Payouts.Cancel(ctx, "po_2"); err != nil || x.Status != PayoutCanceled {
		t.Fatalf("%v %+v", err, x)
	}
	if x, err := c.Payouts.PSBT(ctx, "po_1", "2.5"); err != nil || x.PSBT != "cHNidP8=" || *x.FeeRaw != "141" {
		t.Fatalf("%v %+v", err, x)
	}
	if x, err := c.Payouts.SubmitTransaction(ctx, "po_1", SubmitTransactionInput{SignedTransaction: "0200", Broadcast: Bool(false)}); err != nil || x.TxHash != "ab" || x.Payout.PayoutID != "po_1" {
		t.Fatalf("%v %+v", err, x)
	}
	_, err = c.Payouts.Cancel(ctx, "po_1")
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 409 || apiErr.Code() != "E_API" {
		t.Fatalf("conflict %v", err)
	}
	want := []struct{ method, uri, body string }{
		{"POST", "/v1/payments/pay_1/refunds", `{"amount":"0.50","link_expires_in":3600}`},
		{"GET", "/v1/payments/pay_1/refunds", ""},
		{"POST", "/v1/payouts", `{"lines":[{"network":"eth","address":"0xabc","amount":"1.25","reference":"inv-1"}]}`},
		{"GET", "/v1/payouts?page=1&per_page=2&status=awaiting_payment", ""},
		{"GET", "/v1/payouts?page=2&per_page=2&status=awaiting_payment", ""},
		{"GET", "/v1/payouts/po_1", ""},
		{"POST", "/v1/payouts/po_1/approve", ""},
		{"POST", "/v1/payouts/po_2/cancel", ""},
		{"GET", "/v1/payouts/po_1/psbt?fee_rate=2.5", ""},
		{"POST", "/v1/payouts/po_1/transaction", `{"signed_transaction":"0200","broadcast":false}`},
		{"POST", "/v1/payouts/po_1/cancel", ""},
	}
	if len(*got) != len(want) {
		t.Fatalf("%d requests, want %d", len(*got), len(want))
	}
	for i, w := range want {
		s := (*got)[i]
		if s.method != w.method || s.uri != w.uri || string(s.body) != w.body || !signedOK(s) {
			t.Errorf("request %d: %s %s %s, want %s %s %s", i, s.method, s.uri, s.body, w.method, w.uri, w.body)
		}
	}
}

func TestSolanaWalletAndApprovalThresholdSettings(t *testing.T) {
	srv, got := scripted(t,
		reply{status: 200, body: `{"ok":true,"xpubs":{},"wallets":{"solana":"9WzD"},"payouts_approval_over":{"amount":"1000","currency":"USD"},"derived":{}}`},
		reply{status: 200, body: `{"ok":true,"xpubs":{},"wallets":{},"payouts_approval_over":null,"derived":{}}`},
		reply{status: 200, body: `{"ok":true,"payment":{"payment_id":"pay_s","network":"solana","address":"9WzD","reference":"Hn2C"},"created":true}`},
	)
	c := newTestClient(t, srv.URL, Options{})
	ctx := context.Background()
	s, err := c.Payments.SetSettings(ctx, PaymentSettingsInput{SolanaWallet: String("9WzD"), PayoutsApprovalOver: &ApprovalThreshold{Amount: "1000", Currency: "USD"}})
	if err != nil || s.Wallets.Solana != "9WzD" || s.PayoutsApprovalOver == nil || s.PayoutsApprovalOver.Amount != "1000" {
		t.Fatalf("%v %+v", err, s)
	}
	s, err = c.Payments.SetSettings(ctx, PaymentSettingsInput{PayoutsApprovalOver: &ApprovalThreshold{}})
	if err != nil || s.Wallets.Solana != "" || s.PayoutsApprovalOver != nil {
		t.Fatalf("%v %+v", err, s)
	}
	p, err := c.Payments.Create(ctx, CreatePaymentInput{OrderID: "s-1", NetworkSlug: "solana", Amount: "0.5"})
	if err != nil || p.Payment.Reference == nil || *p.Payment.Reference != "Hn2C" {
		t.Fatalf("%v %+v", err, p)
	}
	for i, body := range []string{`{"wallets":{"solana":"9WzD"},"payouts_approval_over":{"amount":"1000","currency":"USD"}}`, `{"payouts_approval_over":null}`} {
		if string((*got)[i].body) != body {
			t.Errorf("settings %d: %s, want %s", i, (*got)[i].body, body)
		}
	}
}
