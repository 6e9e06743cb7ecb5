package rpcctl

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
)

// AddressWatchService holds the Address Watch routes; use it as client.AddressWatch.
type AddressWatchService struct{ c *Client }

func setNonEmpty(q url.Values, key, value string) {
	if value != "" {
		q.Set(key, value)
	}
}

func setPositive(q url.Values, key string, value int) {
	if value > 0 {
		q.Set(key, strconv.Itoa(value))
	}
}

// eachItem calls fn with every item of the pages next fetches, in order, until a page is empty
// or next says it was the last; it stops at the first error either returns, and returns it.
func eachItem[T any](next func() (items []T, more bool, err error), fn func(T) error) error {
	for {
		items, more, err := next()
		if err != nil {
			return err
		}
		for _, item := range items {
			if err := fn(item); err != nil {
				return err
			}
		}
		if len(items) == 0 || !more {
			return nil
		}
	}
}

// Account is GET /v1/address-watch/account: slots and webhook flags.
func (s *AddressWatchService) Account(ctx context.Context) (*WatchAccount, error) {
	var out WatchAccount
	return &out, s.c.Do(ctx, http.MethodGet, "/v1/address-watch/account", nil, nil, &out)
}

// List is GET /v1/address-watch/addresses: one page of watched addresses.
func (s *AddressWatchService) List(ctx context.Context, p ListWatchesParams) (*WatchList, error) {
	q := url.Values{}
	setNonEmpty(q, "network_slug", p.NetworkSlug)
	setNonEmpty(q, "address", p.Address)
	setPositive(q, "page", p.Page)
	setPositive(q, "per_page", p.PerPage)
	var out WatchList
	return &out, s.c.Do(ctx, http.MethodGet, "/v1/address-watch/addresses", q, nil, &out)
}

// ForEachAddress calls fn with every watched address, fetching page after page; it stops at
// the first error fn returns, and returns it.
func (s *AddressWatchService) ForEachAddress(ctx context.Context, p ListWatchesParams, fn func(WatchedAddress) error) error {
	if p.PerPage == 0 {
		p.PerPage = 200
	}
	p.Page = 0
	return eachItem(func() ([]WatchedAddress, bool, error) {
		p.Page++
		r, err := s.List(ctx, p)
		if err != nil {
			return nil, false, err
		}
		return r.Addresses, p.Page*r.PerPage < r.Total, nil
	}, fn)
}

// Add is POST /v1/address-watch/addresses. Idempotent: the same address returns its watch with Created false.
// The address is in its network's form: EVM 0x, Stellar G..., Bitcoin-style, Tron T..., or a
// Solana public key (base58, kept as given).
func (s *AddressWatchService) Add(ctx context.Context, networkSlug, address string) (*AddedWatch, error) {
	var out AddedWatch
	body := map[string]string{"network_slug": networkSlug, "address": address}
	return &out, s.c.Do(ctx, http.MethodPost, "/v1/address-watch/addresses", nil, body, &out)
}

// Remove is DELETE /v1/address-watch/addresses (the watch_id body is signed).
func (s *AddressWatchService) Remove(ctx context.Context, watchID string) error {
	return s.c.Do(ctx, http.MethodDelete, "/v1/address-watch/addresses", nil, map[string]string{"watch_id": watchID}, nil)
}

// Events is GET /v1/address-watch/events: oldest first; pass NextAfter back as After.
func (s *AddressWatchService) Events(ctx context.Context, p EventsParams) (*EventPage, error) {
	q := url.Values{}
	setNonEmpty(q, "after", p.After)
	setPositive(q, "limit", p.Limit)
	setNonEmpty(q, "network", p.Network)
	setNonEmpty(q, "type", p.Type)
	setNonEmpty(q, "watch_id", p.WatchID)
	var out EventPage
	return &out, s.c.Do(ctx, http.MethodGet, "/v1/address-watch/events", q, nil, &out)
}

// ForEachEvent calls fn with every event after p.After up to the end of the feed.
func (s *AddressWatchService) ForEachEvent(ctx context.Context, p EventsParams, fn func(WebhookEvent) error) error {
	return eachItem(func() ([]WebhookEvent, bool, error) {
		r, err := s.Events(ctx, p)
		if err != nil {
			return nil, false, err
		}
		more := r.NextAfter != nil && *r.NextAfter != p.After
		if more {
			p.After = *r.NextAfter
		}
		return r.Events, more, nil
	}, fn)
}

// Webhook is GET /v1/address-watch/webhook: URL, switch, filters and the egress IPs to allow.
func (s *AddressWatchService) Webhook(ctx context.Context) (*WebhookSettings, error) {
	var out WebhookSettings
	return &out, s.c.Do(ctx, http.MethodGet, "/v1/address-watch/webhook", nil, nil, &out)
}

// SetWebhook is PUT /v1/address-watch/webhook.
func (s *AddressWatchService) SetWebhook(ctx context.Context, in SetWebhookInput) (*WebhookSettings, error) {
	var out WebhookSettings
	return &out, s.c.Do(ctx, http.MethodPut, "/v1/address-watch/webhook", nil, in, &out)
}

// TestWebhook is POST /v1/address-watch/webhook/test: queue a sample delivery of eventType
// ("payment", "payout", "other" or "block") on network; never billed.
func (s *AddressWatchService) TestWebhook(ctx context.Context, eventType, network string) (*QueuedTest, error) {
	var out QueuedTest
	body := map[string]string{"type": eventType, "network": network}
	return &out, s.c.Do(ctx, http.MethodPost, "/v1/address-watch/webhook/test", nil, body, &out)
}

// Deliveries is GET /v1/address-watch/deliveries: newest first, with every attempt.
func (s *AddressWatchService) Deliveries(ctx context.Context, p DeliveriesParams) (*DeliveryPage, error) {
	q := url.Values{}
	setPositive(q, "limit", p.Limit)
	setNonEmpty(q, "before", p.Before)
	setNonEmpty(q, "status", p.Status)
	setNonEmpty(q, "event_id", p.EventID)
	var out DeliveryPage
	return &out, s.c.Do(ctx, http.MethodGet, "/v1/address-watch/deliveries", q, nil, &out)
}

// ForEachDelivery calls fn with every delivery, newest first, page after page.
func (s *AddressWatchService) ForEachDelivery(ctx context.Context, p DeliveriesParams, fn func(WebhookDelivery) error) error {
	return eachItem(func() ([]WebhookDelivery, bool, error) {
		r, err := s.Deliveries(ctx, p)
		if err != nil {
			return nil, false, err
		}
		if r.NextBefore == nil {
			return r.Deliveries, false, nil
		}
		p.Before = *r.NextBefore
		return r.Deliveries, true, nil
	}, fn)
}

// Redeliver is POST /v1/address-watch/deliveries/{delivery_id}/redeliver: it sends a delivery
// again now, with the same X-Webhook-Id and the next attempt number; resending a delivered one
// is not billed again. A delivery being sent at this moment is refused with a 409 *APIError.
func (s *AddressWatchService) Redeliver(ctx context.Context, deliveryID string) (*WebhookDelivery, error) {
	var out struct{ Delivery WebhookDelivery }
	path := "/v1/address-watch/deliveries/" + url.PathEscape(deliveryID) + "/redeliver"
	return &out.Delivery, s.c.Do(ctx, http.MethodPost, path, nil, nil, &out)
}
