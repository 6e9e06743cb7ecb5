// Command integrationtest runs the client against a real `rpcctl serve` (started by the
// repository's vitest harness). It reads PUBLIC_API_KEY, PUBLIC_API_SECRET, PUBLIC_API_BASE and
// RPCCTL_WEBHOOK_SECRET, and prints one JSON line describing what it did.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"reflect"
	"strings"
	"time"

	rpcctl "github.com/rpcctl/rpcctl/clients/go"
)

const address = "0x52908400098527886E0F7030069857D2E4169EE7"

// solanaAddress is a Solana public key: base58 and case-sensitive, kept exactly as given.
const solanaAddress = "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM"

// payoutAddress is where the payout line pays (it is canceled before anything is sent).
const payoutAddress = "0x8ba1f109551bD432803012645Ac136ddd64DBA72"

// xpub is BIP32 test vector 1's master public key: a public key anyone may use, derivation only.
const xpub = "xpub661MyMwAqRbcFtXgS5sYJABqqG9YLmC4Q1Rdap9gSE8NqtwybGhePY2gZ29ESFjqJoCu1Rupje8YtGqsefD265TMg7usUDFdp6W1EGMcet8"

type delivery struct {
	webhookID          string
	event              *rpcctl.WebhookEvent
	wrongSecretRefused bool
}

// await returns the first verified delivery that matches, waiting up to 20 s.
func await(deliveries <-chan delivery, what string, matches func(delivery) bool) delivery {
	timeout := time.After(20 * time.Second)
	for {
		select {
		case d := <-deliveries:
			if matches(d) {
				return d
			}
		case <-timeout:
			check(false, "no verified delivery of %s within 20 s", what)
		}
	}
}

func check(ok bool, format string, args ...interface{}) {
	if !ok {
		fmt.Fprintf(os.Stderr, "FAIL: "+format+"\n", args...)
		os.Exit(1)
	}
}

func must(err error, what string) {
	check(err == nil, "%s: %v", what, err)
}

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	secret := os.Getenv("RPCCTL_WEBHOOK_SECRET")
	client, err := rpcctl.NewClient(rpcctl.Options{})
	must(err, "NewClient")

	account, err := client.Account(ctx)
	must(err, "Account")
	check(account.Plan != nil && account.Plan.Slug == "pro", "account %+v", account)

	created, err := client.CreateEndpoint(ctx, rpcctl.CreateEndpointInput{Name: "go-it", NetworkID: 1, EnvSlug: "mainnet"})
	must(err, "CreateEndpoint")
	list, err := client.ListEndpoints(ctx)
	must(err, "ListEndpoints")
	found := false
	for _, e := range list {
		found = found || e.ID == created.ID
	}
	check(found, "endpoint %d not listed", created.ID)
	want := []string{"203.0.113.7", "2001:db8::1"}
	updated, err := client.SetAllowedIPs(ctx, created.ID, want)
	must(err, "SetAllowedIPs")
	check(reflect.DeepEqual(updated.AllowedIPs, want), "allowed_ips %v", updated.AllowedIPs)
	paused, err := client.SetEndpointStatus(ctx, created.ID, rpcctl.StatusPaused)
	must(err, "SetEndpointStatus")
	check(paused.Status == "paused", "status %s", paused.Status)
	renamed, err := client.RenameEndpoint(ctx, created.ID, "go-it-renamed")
	must(err, "RenameEndpoint")
	check(renamed.Name == "go-it-renamed" && renamed.Status == "paused", "renamed %+v", renamed)
	got, err := client.GetEndpoint(ctx, created.ID)
	must(err, "GetEndpoint")
	check(reflect.DeepEqual(got.AllowedIPs, want), "GetEndpoint allowed_ips %v", got.AllowedIPs)
	_, err = client.SetAllowedIPs(ctx, created.ID, []string{"not-an-ip"})
	var apiErr *rpcctl.APIError
	check(errors.As(err, &apiErr), "a bad IP was accepted: %v", err)
	_, err = client.GetEndpoint(ctx, 999999999)
	var notFound *rpcctl.APIError
	check(errors.As(err, &notFound), "an unknown endpoint was found: %v", err)

	watch, err := client.AddressWatch.Add(ctx, "eth", address)
	must(err, "Add")
	check(watch.Created, "watch not created: %+v", watch)
	listed := false
	must(client.AddressWatch.ForEachAddress(ctx, rpcctl.ListWatchesParams{NetworkSlug: "eth"}, func(w rpcctl.WatchedAddress) error {
		listed = listed || w.WatchID == watch.WatchID
		return nil
	}), "ForEachAddress")
	check(listed, "watch %s not listed", watch.WatchID)
	solanaWatch, err := client.AddressWatch.Add(ctx, "solana", solanaAddress)
	must(err, "Add solana")
	check(solanaWatch.Address == solanaAddress, "solana address changed: %+v", solanaWatch)

	deliveries := make(chan delivery, 16)
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	must(err, "listen")
	server := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		event, err := rpcctl.ConstructEvent(body, r.Header, secret, rpcctl.WebhookOptions{})
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		_, wrong := rpcctl.ConstructEvent(body, r.Header, "whsec_wrong", rpcctl.WebhookOptions{})
		w.WriteHeader(http.StatusOK)
		deliveries <- delivery{webhookID: r.Header.Get("X-Webhook-Id"), event: event, wrongSecretRefused: wrong != nil}
	})}
	go server.Serve(listener)
	// Shutdown, not Close: the handler signals before its 200 is on the wire, and Close would
	// cut that answer off, so the service would record a failed attempt and retry.
	defer func() {
		stop, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		server.Shutdown(stop)
	}()

	url := fmt.Sprintf("http://%s/hooks", listener.Addr())
	_, err = client.AddressWatch.SetWebhook(ctx, rpcctl.SetWebhookInput{URL: url, Enabled: true})
	must(err, "SetWebhook")
	queued, err := client.AddressWatch.TestWebhook(ctx, "payment", "eth")
	must(err, "TestWebhook")
	d := await(deliveries, queued.WebhookID, func(d delivery) bool { return d.webhookID == queued.WebhookID })

	// Payment orders: an xpub, an order (made twice: the same request again within its second
	// must be re-signed, and answers the same order), found by Get and by the paging helper,
	// then canceled (twice, likewise), which sends a payment_order webhook to the receiver.
	settings, err := client.Payments.SetSettings(ctx, rpcctl.PaymentSettingsInput{EVMXpub: rpcctl.String(xpub), DisplayName: rpcctl.String("Go Shop")})
	must(err, "SetSettings")
	check(settings.Xpubs.EVM == xpub && settings.Derived.EVM != nil && settings.DisplayName != nil && *settings.DisplayName == "Go Shop", "settings %+v", settings)
	firstAddress := settings.Derived.EVM.FirstAddress
	order := rpcctl.CreatePaymentInput{OrderID: "go-it-1", NetworkSlug: "eth", Amount: "0.25", Metadata: map[string]interface{}{"lang": "go"}}
	payment, err := client.Payments.Create(ctx, order)
	must(err, "Payments.Create")
	check(payment.Created && payment.Payment.Status == rpcctl.PaymentPending, "create %+v", payment)
	pid := payment.Payment.PaymentID
	check(strings.HasSuffix(payment.Payment.CheckoutURL, "/pay/"+pid), "checkout_url %+v", payment.Payment)
	again, err := client.Payments.Create(ctx, order)
	must(err, "Payments.Create again")
	check(!again.Created && again.Payment.PaymentID == pid, "create again %+v", again)
	fetched, err := client.Payments.Get(ctx, pid)
	must(err, "Payments.Get")
	check(fetched.Address == firstAddress, "Get: %s is not the first derived address %s", fetched.Address, firstAddress)
	var listedPayments []string
	must(client.Payments.ForEach(ctx, rpcctl.ListPaymentsParams{Status: rpcctl.PaymentPending, PerPage: 1}, func(p rpcctl.Payment) error {
		listedPayments = append(listedPayments, p.PaymentID)
		return nil
	}), "Payments.ForEach")
	check(reflect.DeepEqual(listedPayments, []string{pid}), "ForEach %v", listedPayments)
	canceled, err := client.Payments.Cancel(ctx, pid)
	must(err, "Payments.Cancel")
	check(canceled.Status == rpcctl.PaymentFailed && canceled.Reason != nil && *canceled.Reason == "canceled", "cancel %+v", canceled)
	canceled, err = client.Payments.Cancel(ctx, pid)
	must(err, "Payments.Cancel again")
	check(canceled.Status == rpcctl.PaymentFailed, "cancel again %+v", canceled)
	_, err = client.Payments.Create(ctx, rpcctl.CreatePaymentInput{OrderID: "go-it-1", NetworkSlug: "eth", Amount: "1"})
	var conflict *rpcctl.APIError
	check(errors.As(err, &conflict) && conflict.StatusCode == 409, "another body with a used order_id: %v", err)
	// A fiat price reaches the service as price_amount + price_currency: this serve has no
	// rate for ETH/USD, so it refuses with the contract's message (and makes no order).
	_, err = client.Payments.Create(ctx, rpcctl.CreatePaymentInput{OrderID: "go-it-fiat", NetworkSlug: "eth", PriceAmount: "19.99", PriceCurrency: "USD"})
	var noRate *rpcctl.APIError
	check(errors.As(err, &noRate) && noRate.StatusCode == 400 && noRate.Message == "Rate unavailable for ETH/USD.", "a fiat order without a rate: %v", err)
	hook := await(deliveries, "the payment_order webhook", func(d delivery) bool { return d.event.PaymentID == pid })

	// Refunds: the canceled order received nothing, so the service refuses one (409), and lists none.
	_, err = client.Refunds.Create(ctx, pid, rpcctl.CreateRefundInput{Address: payoutAddress})
	var refused *rpcctl.APIError
	check(errors.As(err, &refused), "a refund of an order that received nothing: %v", err)
	refunds, err := client.Refunds.List(ctx, pid)
	must(err, "Refunds.List")
	check(len(refunds) == 0, "refunds of the canceled order: %+v", refunds)
	// A payout of one line: awaiting payment (an owner's key, no threshold), listed, read back,
	// then canceled; each of the two states sends a payout_line webhook, the cancel's is awaited.
	made, err := client.Payouts.Create(ctx, []rpcctl.PayoutLineInput{{Network: "eth", Address: payoutAddress, Amount: "0.001", Reference: "go-it-payout"}})
	must(err, "Payouts.Create")
	check(made.Status == rpcctl.PayoutAwaitingPayment && made.LineCount == 1, "payout %+v", made)
	po := made.PayoutID
	payoutListed := false
	must(client.Payouts.ForEach(ctx, rpcctl.ListPayoutsParams{Status: rpcctl.PayoutAwaitingPayment}, func(p rpcctl.Payout) error {
		payoutListed = payoutListed || p.PayoutID == po
		return nil
	}), "Payouts.ForEach")
	page, err := client.Payouts.List(ctx, rpcctl.ListPayoutsParams{Status: rpcctl.PayoutAwaitingPayment, Page: 1, PerPage: 1})
	must(err, "Payouts.List")
	check(payoutListed && len(page.Payouts) == 1 && page.Payouts[0].PayoutID == po, "payouts %v %+v", payoutListed, page)
	fetchedPayout, err := client.Payouts.Get(ctx, po)
	must(err, "Payouts.Get")
	line := fetchedPayout.Lines[0]
	// The URI is EIP-681 when the node tells the chain id; this service's node is away: the address alone.
	check(line.PaymentRequest != nil && strings.Contains(line.PaymentRequest.URI, payoutAddress), "line %+v", line)
	payoutCanceled, err := client.Payouts.Cancel(ctx, po)
	must(err, "Payouts.Cancel")
	check(payoutCanceled.Status == rpcctl.PayoutCanceled, "payout cancel %+v", payoutCanceled)
	awaitingAfter, err := client.Payouts.List(ctx, rpcctl.ListPayoutsParams{Status: rpcctl.PayoutAwaitingPayment})
	must(err, "Payouts.List after the cancel")
	payoutHook := await(deliveries, "the payout_line webhook", func(d delivery) bool {
		return d.event.PayoutID == po && d.event.Event == "payout.canceled"
	})

	// Solana: the merchant's one wallet is a setting; a Solana order is paid to it and told
	// apart by its own Solana Pay reference.
	walletSettings, err := client.Payments.SetSettings(ctx, rpcctl.PaymentSettingsInput{SolanaWallet: rpcctl.String(solanaAddress)})
	must(err, "SetSettings wallets.solana")
	check(walletSettings.Wallets.Solana == solanaAddress, "wallets.solana not set: %+v", walletSettings.Wallets)
	readBack, err := client.Payments.Settings(ctx)
	must(err, "Settings")
	wallet := readBack.Wallets.Solana
	sol, err := client.Payments.Create(ctx, rpcctl.CreatePaymentInput{OrderID: "go-it-sol", NetworkSlug: "solana", Amount: "0.5"})
	must(err, "Payments.Create solana")
	check(sol.Payment.Address == wallet && sol.Payment.Reference != nil && *sol.Payment.Reference != wallet, "solana order %+v", sol.Payment)

	// Redeliver the test webhook once the service has recorded its first delivery.
	var first rpcctl.WebhookDelivery
	deadline := time.Now().Add(20 * time.Second)
	for first.Status != "delivered" {
		check(time.Now().Before(deadline), "delivery not recorded as delivered: %+v", first)
		time.Sleep(100 * time.Millisecond)
		must(client.AddressWatch.ForEachDelivery(ctx, rpcctl.DeliveriesParams{}, func(x rpcctl.WebhookDelivery) error {
			if x.WebhookID == queued.WebhookID {
				first = x
			}
			return nil
		}), "ForEachDelivery")
	}
	redelivered, err := client.AddressWatch.Redeliver(ctx, first.DeliveryID)
	must(err, "Redeliver")
	check(redelivered.DeliveryID == first.DeliveryID, "redeliver %+v", redelivered)
	await(deliveries, "the redelivery", func(x delivery) bool { return x.webhookID == queued.WebhookID })

	out, _ := json.Marshal(map[string]interface{}{
		"endpoint_id":          created.ID,
		"renamed":              renamed.Name,
		"allowed_ips":          updated.AllowedIPs,
		"bad_request":          map[string]interface{}{"status": apiErr.StatusCode, "error": apiErr.Message, "code": apiErr.Code()},
		"not_found":            map[string]interface{}{"status": notFound.StatusCode, "code": notFound.Code()},
		"watch_id":             watch.WatchID,
		"solana_watch_id":      solanaWatch.WatchID,
		"webhook_id":           queued.WebhookID,
		"event":                d.event.Raw,
		"wrong_secret_refused": d.wrongSecretRefused,
		"payment":              map[string]interface{}{"payment_id": pid, "order_id": order.OrderID, "address": firstAddress, "created_again": again.Created},
		"payment_event":        hook.event.Raw,
		"refund_refused":       map[string]interface{}{"status": refused.StatusCode, "code": refused.Code(), "error": refused.Message},
		"payout":               map[string]interface{}{"payout_id": po, "listed": payoutListed, "status": payoutCanceled.Status, "awaiting_total": []int{page.Total, awaitingAfter.Total}},
		"payout_event":         payoutHook.event.Raw,
		"solana":               map[string]interface{}{"wallet": wallet, "payment_id": sol.Payment.PaymentID, "reference": *sol.Payment.Reference},
		"redelivered":          map[string]interface{}{"delivery_id": first.DeliveryID, "webhook_id": queued.WebhookID, "arrivals": 2},
	})
	fmt.Println(string(out))
}
