package rpcctl

import (
	"context"
	"net/http"
	"net/url"
)

// RefundsService holds the refund routes of payment orders; use it as client.Refunds.
//
// rpcctl prepares and tracks a refund; the merchant's own wallet pays it (the line's
// PaymentRequest.URI, or a PSBT from client.Payouts.PSBT). A refund's "rf_" id works with every
// PayoutsService method.
type RefundsService struct{ c *Client }

// Create is POST /v1/payments/{payment_id}/refunds: it refunds an order that received money
// (a 409 *APIError otherwise). Without in.Address the answer's RefundLink.URL is a page for the
// customer to give one (shown this once).
func (s *RefundsService) Create(ctx context.Context, paymentID string, in CreateRefundInput) (*Refund, error) {
	var out struct{ Refund Refund }
	return &out.Refund, s.c.Do(ctx, http.MethodPost, "/v1/payments/"+url.PathEscape(paymentID)+"/refunds", nil, in, &out)
}

// List is GET /v1/payments/{payment_id}/refunds: the order's refunds, newest first.
func (s *RefundsService) List(ctx context.Context, paymentID string) ([]Refund, error) {
	var out struct{ Refunds []Refund }
	return out.Refunds, s.c.Do(ctx, http.MethodGet, "/v1/payments/"+url.PathEscape(paymentID)+"/refunds", nil, nil, &out)
}

// PayoutsService holds the payout routes; use it as client.Payouts.
//
// A developer key's payout, or one worth more than the settings' PayoutsApprovalOver, waits for
// another owner's Approve. The merchant's wallet pays each line's PaymentRequest, or signs the
// PSBT of PSBT and hands it to SubmitTransaction.
type PayoutsService struct{ c *Client }

// Create is POST /v1/payouts: up to 1,000 lines, each checked (a mistake names its line).
func (s *PayoutsService) Create(ctx context.Context, lines []PayoutLineInput) (*Payout, error) {
	var out struct{ Payout Payout }
	body := struct {
		Lines []PayoutLineInput `json:"lines"`
	}{lines}
	return &out.Payout, s.c.Do(ctx, http.MethodPost, "/v1/payouts", nil, body, &out)
}

// Get is GET /v1/payouts/{payout_id}: one payout (or refund) with its lines and their payment requests.
func (s *PayoutsService) Get(ctx context.Context, payoutID string) (*Payout, error) {
	var out struct{ Payout Payout }
	return &out.Payout, s.c.Do(ctx, http.MethodGet, "/v1/payouts/"+url.PathEscape(payoutID), nil, nil, &out)
}

// List is GET /v1/payouts: one page of payouts with p.Status (any when empty), newest first,
// without their lines; Total counts every payout with p.Status.
func (s *PayoutsService) List(ctx context.Context, p ListPayoutsParams) (*PayoutList, error) {
	q := url.Values{}
	setNonEmpty(q, "status", p.Status)
	setPositive(q, "page", p.Page)
	setPositive(q, "per_page", p.PerPage)
	var out PayoutList
	return &out, s.c.Do(ctx, http.MethodGet, "/v1/payouts", q, nil, &out)
}

// ForEach calls fn with every payout with p.Status (any when empty), newest first, fetching
// page after page (p.Page is ignored); it stops at the first error fn returns, and returns it.
func (s *PayoutsService) ForEach(ctx context.Context, p ListPayoutsParams, fn func(Payout) error) error {
	if p.PerPage == 0 {
		p.PerPage = 200
	}
	p.Page = 0
	return eachItem(func() ([]Payout, bool, error) {
		p.Page++
		r, err := s.List(ctx, p)
		if err != nil {
			return nil, false, err
		}
		return r.Payouts, p.Page*r.PerPage < r.Total, nil
	}, fn)
}

// Approve is POST /v1/payouts/{payout_id}/approve: an owner other than its maker (403 for the maker).
func (s *PayoutsService) Approve(ctx context.Context, payoutID string) (*Payout, error) {
	var out struct{ Payout Payout }
	return &out.Payout, s.c.Do(ctx, http.MethodPost, "/v1/payouts/"+url.PathEscape(payoutID)+"/approve", nil, nil, &out)
}

// Cancel is POST /v1/payouts/{payout_id}/cancel: the lines nothing was paid to yet (409 when none is left).
func (s *PayoutsService) Cancel(ctx context.Context, payoutID string) (*Payout, error) {
	var out struct{ Payout Payout }
	return &out.Payout, s.c.Do(ctx, http.MethodPost, "/v1/payouts/"+url.PathEscape(payoutID)+"/cancel", nil, nil, &out)
}

// PSBT is GET /v1/payouts/{payout_id}/psbt: an unsigned BIP174 PSBT (base64) paying the lines
// awaiting payment on a UTXO network; feeRate in sat/vB ("" for the service's estimate). It
// reserves a change address, so it needs a developer or owner key.
func (s *PayoutsService) PSBT(ctx context.Context, payoutID string, feeRate string) (*PayoutPSBT, error) {
	q := url.Values{}
	setNonEmpty(q, "fee_rate", feeRate)
	var out PayoutPSBT
	return &out, s.c.Do(ctx, http.MethodGet, "/v1/payouts/"+url.PathEscape(payoutID)+"/psbt", q, nil, &out)
}

// SubmitTransaction is POST /v1/payouts/{payout_id}/transaction: a signed transaction (hex, or a
// finalized PSBT in base64), checked against the lines and broadcast unless in.Broadcast is false.
func (s *PayoutsService) SubmitTransaction(ctx context.Context, payoutID string, in SubmitTransactionInput) (*SubmittedTransaction, error) {
	var out SubmittedTransaction
	return &out, s.c.Do(ctx, http.MethodPost, "/v1/payouts/"+url.PathEscape(payoutID)+"/transaction", nil, in, &out)
}
