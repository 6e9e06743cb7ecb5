package rpcctl

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"
)

type seen struct {
	method, uri string
	header      http.Header
	body        []byte
}

type reply struct {
	status int
	header map[string]string
	body   string
	hang   time.Duration
}

// scripted answers each request with the next reply and records it.
func scripted(t *testing.T, replies ...reply) (*httptest.Server, *[]seen) {
	var mu sync.Mutex
	var got []seen
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, seen{r.Method, r.RequestURI, r.Header.Clone(), body})
		rep := reply{status: 200, body: `{"ok":true}`}
		if len(replies) > 0 {
			rep, replies = replies[0], replies[1:]
		}
		mu.Unlock()
		if rep.hang > 0 {
			time.Sleep(rep.hang)
		}
		for k, v := range rep.header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(rep.status)
		io.WriteString(w, rep.body)
	}))
	t.Cleanup(srv.Close)
	return srv, &got
}

func newTestClient(t *testing.T, base string, opts Options) *Client {
	t.Helper()
	opts.APIKey, opts.Secret, opts.BaseURL = "key-1", "secret-1", base+"/"
	c, err := NewClient(opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func signedOK(s seen) bool {
	ts, err := strconv.ParseInt(s.header.Get("X-Timestamp"), 10, 64)
	return err == nil && s.header.Get("X-Api-Key") == "key-1" && Verify("secret-1", ts, s.method, s.uri, s.body, s.header.Get("X-Signature"))
}

func TestClientSignsTheBytesItSends(t *testing.T) {
	srv, got := scripted(t,
		reply{status: 200, body: `{"ok":true,"endpoint":{"id":7,"name":"main <✓>"}}`},
		reply{status: 200, body: `{"ok":true,"usage":{"days":7}}`},
	)
	c := newTestClient(t, srv.URL, Options{})
	ep, err := c.CreateEndpoint(context.Background(), CreateEndpointInput{Name: "main <✓>", NetworkID: 1, EnvSlug: "mainnet"})
	if err != nil || ep.ID != 7 {
		t.Fatalf("%v %+v", err, ep)
	}
	if u, err := c.EndpointsUsage(context.Background(), 7); err != nil || u.Days != 7 {
		t.Fatalf("%v %+v", err, u)
	}
	post, get := (*got)[0], (*got)[1]
	var sent map[string]interface{}
	if err := json.Unmarshal(post.body, &sent); err != nil || sent["name"] != "main <✓>" || post.header.Get("Content-Type") != "application/json" {
		t.Errorf("sent %s", post.body)
	}
	if get.uri != "/v1/endpoints/usage?days=7" || len(get.body) != 0 {
		t.Errorf("GET %s %q", get.uri, get.body)
	}
	for _, s := range *got {
		if !signedOK(s) {
			t.Errorf("%s %s not signed right: %v", s.method, s.uri, s.header)
		}
	}
	raw := `{ "watch_id" : "w_1" }`
	if err := c.Do(context.Background(), "DELETE", "/v1/address-watch/addresses", nil, raw, nil); err != nil {
		t.Fatal(err)
	}
	if string((*got)[2].body) != raw || !signedOK((*got)[2]) {
		t.Errorf("string body changed: %q", (*got)[2].body)
	}
}

func TestClientAPIError(t *testing.T) {
	srv, _ := scripted(t, reply{status: 400, body: `{"ok":false,"error":"name: required"}`}, reply{status: 502, body: "bad gateway"})
	c := newTestClient(t, srv.URL, Options{})
	_, err := c.CreateEndpoint(context.Background(), CreateEndpointInput{})
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Message != "name: required" || apiErr.Code() != "E_API" {
		t.Fatalf("%#v", err)
	}
	_, err = c.Account(context.Background())
	if !errors.As(err, &apiErr) || apiErr.Message != "HTTP 502: bad gateway" {
		t.Fatalf("%#v", err)
	}
}

func TestClientRetries429AfterRetryAfter(t *testing.T) {
	srv, got := scripted(t,
		reply{status: 429, header: map[string]string{"Retry-After": "1"}, body: `{"ok":false,"error":"Too many requests"}`},
		reply{status: 200, body: `{"ok":true,"user_id":7}`},
	)
	c := newTestClient(t, srv.URL, Options{})
	start := time.Now()
	a, err := c.Account(context.Background())
	if err != nil || a.UserID != 7 {
		t.Fatalf("%v %+v", err, a)
	}
	if waited := time.Since(start); waited < 900*time.Millisecond {
		t.Errorf("did not wait out Retry-After: %v", waited)
	}
	if len(*got) != 2 {
		t.Errorf("%d requests", len(*got))
	}
}

func TestClientGivesUpOn429(t *testing.T) {
	limited := reply{status: 429, header: map[string]string{"Retry-After": "120"}, body: `{"ok":false,"error":"Too many requests"}`}
	srv, got := scripted(t, limited)
	c := newTestClient(t, srv.URL, Options{MaxRetryAfter: time.Second})
	_, err := c.Account(context.Background())
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 429 || apiErr.RetryAfter != 120 || apiErr.Code() != "E_RATE_LIMIT" {
		t.Fatalf("%#v", err)
	}
	if len(*got) != 1 {
		t.Errorf("a Retry-After beyond MaxRetryAfter must not be waited out: %d requests", len(*got))
	}
}

func TestClientRetriesIdempotentOnConnectionErrorsOnly(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	accepted := 0
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			accepted++
			mu.Unlock()
			conn.Close() // a reset before any answer
		}
	}()
	defer l.Close()
	c := newTestClient(t, "http://"+l.Addr().String(), Options{MaxRetries: 2})
	var netErr *NetworkError
	if _, err := c.ListEndpoints(context.Background()); !errors.As(err, &netErr) {
		t.Fatalf("%#v", err)
	}
	mu.Lock()
	if accepted != 3 {
		t.Errorf("GET: %d connections, want 3", accepted)
	}
	accepted = 0
	mu.Unlock()
	if _, err := c.CreateEndpoint(context.Background(), CreateEndpointInput{Name: "x", NetworkEnvironmentID: 1}); !errors.As(err, &netErr) {
		t.Fatalf("%#v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if accepted != 1 {
		t.Errorf("POST: %d connections, want 1 (not idempotent)", accepted)
	}
}

func TestClientTimeoutAndContext(t *testing.T) {
	srv, _ := scripted(t, reply{status: 200, body: `{}`, hang: 500 * time.Millisecond}, reply{status: 200, body: `{}`, hang: 500 * time.Millisecond})
	c := newTestClient(t, srv.URL, Options{Timeout: 100 * time.Millisecond, MaxRetries: -1})
	var netErr *NetworkError
	if _, err := c.Account(context.Background()); !errors.As(err, &netErr) {
		t.Fatalf("timeout: %#v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	c2 := newTestClient(t, srv.URL, Options{})
	if _, err := c2.Account(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("context: %#v", err)
	}
}

func TestClientReadsTheEnvironment(t *testing.T) {
	srv, got := scripted(t)
	t.Setenv("PUBLIC_API_KEY", "env-key")
	t.Setenv("PUBLIC_API_SECRET", "env-secret")
	t.Setenv("PUBLIC_API_BASE", srv.URL)
	c, err := NewClient(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Account(context.Background()); err != nil {
		t.Fatal(err)
	}
	if (*got)[0].header.Get("X-Api-Key") != "env-key" {
		t.Error("PUBLIC_API_KEY not used")
	}
	t.Setenv("PUBLIC_API_SECRET", "")
	var cfg *ConfigError
	if _, err := NewClient(Options{}); !errors.As(err, &cfg) {
		t.Errorf("no secret: %#v", err)
	}
}

func TestPagingHelpers(t *testing.T) {
	srv, got := scripted(t,
		reply{status: 200, body: `{"ok":true,"addresses":[{"watch_id":"w_1"},{"watch_id":"w_2"}],"page":1,"per_page":2,"total":3}`},
		reply{status: 200, body: `{"ok":true,"addresses":[{"watch_id":"w_3"}],"page":2,"per_page":2,"total":3}`},
		reply{status: 200, body: `{"ok":true,"events":[{"id":"1"},{"id":"2"}],"next_after":"2"}`},
		reply{status: 200, body: `{"ok":true,"events":[],"next_after":"2"}`},
	)
	c := newTestClient(t, srv.URL, Options{})
	var ids []string
	err := c.AddressWatch.ForEachAddress(context.Background(), ListWatchesParams{PerPage: 2}, func(w WatchedAddress) error {
		ids = append(ids, w.WatchID)
		return nil
	})
	if err != nil || len(ids) != 3 || ids[2] != "w_3" {
		t.Fatalf("%v %v", err, ids)
	}
	var events []string
	if err := c.AddressWatch.ForEachEvent(context.Background(), EventsParams{Limit: 2}, func(e WebhookEvent) error {
		events = append(events, e.ID)
		return nil
	}); err != nil || len(events) != 2 {
		t.Fatalf("%v %v", err, events)
	}
	want := []string{
		"/v1/address-watch/addresses?page=1&per_page=2", "/v1/address-watch/addresses?page=2&per_page=2",
		"/v1/address-watch/events?limit=2", "/v1/address-watch/events?after=2&limit=2",
	}
	for i, w := range want {
		if (*got)[i].uri != w {
			t.Errorf("request %d: %s, want %s", i, (*got)[i].uri, w)
		}
	}
}

// fakeTime makes c's clock one that its waits move forward, so waits cost no time in tests.
func fakeTime(c *Client) *[]time.Duration {
	var mu sync.Mutex
	now := time.Unix(1_700_000_000, 250_000_000)
	var waits []time.Duration
	c.now = func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return now
	}
	c.wait = func(_ context.Context, d time.Duration) error {
		mu.Lock()
		defer mu.Unlock()
		waits = append(waits, d)
		now = now.Add(d)
		return nil
	}
	return &waits
}

func TestClientRepeatsAnIdenticalMutatingRequestWithTheNextSecondsSignature(t *testing.T) {
	// The service takes a mutating signature once; the same bytes again in the same second
	// would be refused as a replay.
	srv, got := scripted(t)
	c := newTestClient(t, srv.URL, Options{})
	waits := fakeTime(c)
	ctx := context.Background()
	for i := 0; i < 2; i++ {
		if _, err := c.Payments.Cancel(ctx, "pay_1"); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 2; i++ {
		if _, err := c.Payments.Get(ctx, "pay_1"); err != nil {
			t.Fatal(err)
		}
	}
	first, second, get1, get2 := (*got)[0], (*got)[1], (*got)[2], (*got)[3]
	if first.header.Get("X-Timestamp") != "1700000000" || second.header.Get("X-Timestamp") != "1700000001" {
		t.Errorf("timestamps %s, %s", first.header.Get("X-Timestamp"), second.header.Get("X-Timestamp"))
	}
	if len(*waits) != 1 || (*waits)[0] != 755*time.Millisecond {
		t.Errorf("waits %v, want one of 755ms", *waits)
	}
	if !signedOK(first) || !signedOK(second) {
		t.Error("not signed right")
	}
	if get1.header.Get("X-Signature") != get2.header.Get("X-Signature") {
		t.Error("a repeated GET needs no new signature")
	}
	// Another body is another signature: no wait.
	c.RenameEndpoint(ctx, 1, "a")
	c.RenameEndpoint(ctx, 1, "b")
	if len(*waits) != 1 {
		t.Errorf("waits %v", *waits)
	}
}

func TestClientResignsOnceWhenAnotherProcessSentTheSameRequest(t *testing.T) {
	replayedReply := reply{status: 401, body: `{"ok":false,"error":"Invalid signature."}`}
	srv, got := scripted(t, replayedReply, reply{status: 200, body: `{"ok":true,"delivery":{"delivery_id":"7"}}`}, replayedReply, replayedReply, replayedReply)
	c := newTestClient(t, srv.URL, Options{})
	fakeTime(c)
	ctx := context.Background()
	d, err := c.AddressWatch.Redeliver(ctx, "7")
	if err != nil || d.DeliveryID != "7" {
		t.Fatalf("%v %+v", err, d)
	}
	a, b := (*got)[0], (*got)[1]
	if a.uri != "/v1/address-watch/deliveries/7/redeliver" || a.header.Get("X-Timestamp") == b.header.Get("X-Timestamp") {
		t.Errorf("%s: %s then %s", a.uri, a.header.Get("X-Timestamp"), b.header.Get("X-Timestamp"))
	}
	// Only once: a wrong secret also answers "Invalid signature.", and must surface.
	_, err = c.Payments.Create(ctx, CreatePaymentInput{OrderID: "x", NetworkSlug: "eth", Amount: "1"})
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 401 || len(*got) != 4 {
		t.Fatalf("%v after %d requests", err, len(*got))
	}
}

func TestPaymentRoutes(t *testing.T) {
	order := `{"payment_id":"pay_1","order_id":"1042","status":"pending","derivation_index":0,"metadata":{"cart":42},"aml":null,"reason":null,"checkout_url":"https://pay.example/pay/pay_1"}`
	srv, got := scripted(t,
		reply{status: 200, body: `{"ok":true,"xpubs":{"evm":"xpub1","utxo":"zpub1"},"aml_fail_at":"severe","underpaid_tolerance_bps":50,"accept_late":false,"display_name":"Corner Shop","redirect_url":null,"derived":{"evm":{"first_address":"0xabc","next_index":0},"utxo":{"first_address":"bc1q","network":"bitcoin","next_index":3}}}`},
		reply{status: 200, body: `{"ok":true,"payment":` + order + `,"created":true}`},
		reply{status: 200, body: `{"ok":true,"payments":[` + order + `,` + order + `],"page":1,"per_page":2,"total":3}`},
		reply{status: 200, body: `{"ok":true,"payments":[` + order + `],"page":2,"per_page":2,"total":3}`},
	)
	c := newTestClient(t, srv.URL, Options{})
	ctx := context.Background()
	settings, err := c.Payments.SetSettings(ctx, PaymentSettingsInput{EVMXpub: String("xpub1"), UTXOXpub: String("zpub1"), TronXpub: String(""), AMLFailAt: String("severe"), UnderpaidToleranceBPS: Int(50), DisplayName: String("Corner Shop"), RedirectURL: String("")})
	if err != nil || settings.Derived.EVM == nil || settings.Derived.EVM.FirstAddress != "0xabc" || settings.AMLFailAt != "severe" ||
		settings.Xpubs.UTXO != "zpub1" || settings.Derived.UTXO == nil || settings.Derived.UTXO.Network != "bitcoin" || settings.Derived.Tron != nil ||
		settings.DisplayName == nil || *settings.DisplayName != "Corner Shop" || settings.RedirectURL != nil {
		t.Fatalf("%v %+v", err, settings)
	}
	created, err := c.Payments.Create(ctx, CreatePaymentInput{OrderID: "1042", NetworkSlug: "eth", Amount: "12.50", Asset: "USDC", Metadata: map[string]interface{}{"cart": 42}})
	if err != nil || !created.Created || created.Payment.PaymentID != "pay_1" || created.Payment.CheckoutURL != "https://pay.example/pay/pay_1" || *created.Payment.DerivationIndex != 0 || string(created.Payment.Metadata) != `{"cart":42}` {
		t.Fatalf("%v %+v", err, created)
	}
	n := 0
	if err := c.Payments.ForEach(ctx, ListPaymentsParams{Status: PaymentPending, PerPage: 2}, func(Payment) error { n++; return nil }); err != nil || n != 3 {
		t.Fatalf("%v: %d orders", err, n)
	}
	want := []struct{ method, uri, body string }{
		{"PUT", "/v1/payments/settings", `{"xpubs":{"evm":"xpub1","tron":"","utxo":"zpub1"},"aml_fail_at":"severe","underpaid_tolerance_bps":50,"display_name":"Corner Shop","redirect_url":""}`},
		{"POST", "/v1/payments", `{"order_id":"1042","network_slug":"eth","amount":"12.50","asset":"USDC","metadata":{"cart":42}}`},
		{"GET", "/v1/payments?page=1&per_page=2&status=pending", ""},
		{"GET", "/v1/payments?page=2&per_page=2&status=pending", ""},
	}
	for i, w := range want {
		s := (*got)[i]
		if s.method != w.method || s.uri != w.uri || string(s.body) != w.body {
			t.Errorf("request %d: %s %s %s, want %s %s %s", i, s.method, s.uri, s.body, w.method, w.uri, w.body)
		}
	}
	if _, err := c.Payments.Cancel(ctx, "pay_a/b"); err != nil {
		t.Fatal(err)
	}
	if s := (*got)[4]; s.uri != "/v1/payments/pay_a%2Fb/cancel" || !signedOK(s) {
		t.Errorf("cancel %s", s.uri)
	}
}
