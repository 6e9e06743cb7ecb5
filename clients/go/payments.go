package rpcctl

import (
	"context"
	"net/http"
	"net/url"
)

// PaymentsService holds the payment order routes; use it as client.Payments.
//
// Amounts are decimal strings ("12.50") both ways: a float64 has already lost precision, and
// the service refuses JSON numbers. The *Raw fields are integer strings in base units.
type PaymentsService struct{ c *Client }

// Create is POST /v1/payments. It is idempotent by OrderID: the same input again returns the
// existing order with Created false; another input with a used OrderID is a 409 *APIError.
// Without Address the service derives one from the xpub set with SetSettings.
func (s *PaymentsService) Create(ctx context.Context, in CreatePaymentInput) (*CreatedPayment, error) {
	var out CreatedPayment
	return &out, s.c.Do(ctx, http.MethodPost, "/v1/payments", nil, in, &out)
}

// Get is GET /v1/payments/{payment_id}; a missing order is a 404 *APIError (see IsNotFound).
func (s *PaymentsService) Get(ctx context.Context, paymentID string) (*Payment, error) {
	var out struct{ Payment Payment }
	return &out.Payment, s.c.Do(ctx, http.MethodGet, "/v1/payments/"+url.PathEscape(paymentID), nil, nil, &out)
}

// List is GET /v1/payments: one page of orders, newest first.
func (s *PaymentsService) List(ctx context.Context, p ListPaymentsParams) (*PaymentList, error) {
	q := url.Values{}
	setNonEmpty(q, "order_id", p.OrderID)
	setNonEmpty(q, "status", p.Status)
	setNonEmpty(q, "network", p.Network)
	setPositive(q, "page", p.Page)
	setPositive(q, "per_page", p.PerPage)
	var out PaymentList
	return &out, s.c.Do(ctx, http.MethodGet, "/v1/payments", q, nil, &out)
}

// ForEach calls fn with every order matching p's filters, newest first, fetching page after
// page (p.Page is ignored); it stops at the first error fn returns, and returns it.
func (s *PaymentsService) ForEach(ctx context.Context, p ListPaymentsParams, fn func(Payment) error) error {
	if p.PerPage == 0 {
		p.PerPage = 200
	}
	p.Page = 0
	return eachItem(func() ([]Payment, bool, error) {
		p.Page++
		r, err := s.List(ctx, p)
		if err != nil {
			return nil, false, err
		}
		return r.Payments, p.Page*r.PerPage < r.Total, nil
	}, fn)
}

// Cancel is POST /v1/payments/{payment_id}/cancel: only a pending order can be canceled (409
// otherwise). It ends failed with reason "canceled"; canceling it again answers the same order.
func (s *PaymentsService) Cancel(ctx context.Context, paymentID string) (*Payment, error) {
	var out struct{ Payment Payment }
	return &out.Payment, s.c.Do(ctx, http.MethodPost, "/v1/payments/"+url.PathEscape(paymentID)+"/cancel", nil, nil, &out)
}

// Settings is GET /v1/payments/settings; Derived.EVM.FirstAddress shows whose wallet the xpub is.
func (s *PaymentsService) Settings(ctx context.Context) (*PaymentSettings, error) {
	var out PaymentSettings
	return &out, s.c.Do(ctx, http.MethodGet, "/v1/payments/settings", nil, nil, &out)
}

// SetSettings is PUT /v1/payments/settings: the fields set replace theirs, nil ones are kept.
func (s *PaymentsService) SetSettings(ctx context.Context, in PaymentSettingsInput) (*PaymentSettings, error) {
	var out PaymentSettings
	return &out, s.c.Do(ctx, http.MethodPut, "/v1/payments/settings", nil, in, &out)
}

// String returns a pointer to v, for the optional fields of PaymentSettingsInput.
func String(v string) *string { return &v }

// Int returns a pointer to v, for the optional fields of PaymentSettingsInput.
func Int(v int) *int { return &v }

// Bool returns a pointer to v, for the optional fields of PaymentSettingsInput.
func Bool(v bool) *bool { return &v }
