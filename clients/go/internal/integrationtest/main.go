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
	"time"

	rpcctl "github.com/rpcctl/rpcctl/clients/go"
)

const address = "0x52908400098527886E0F7030069857D2E4169EE7"

type delivery struct {
	webhookID          string
	event              map[string]json.RawMessage
	wrongSecretRefused bool
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
	got, err := client.GetEndpoint(ctx, created.ID)
	must(err, "GetEndpoint")
	check(reflect.DeepEqual(got.AllowedIPs, want), "GetEndpoint allowed_ips %v", got.AllowedIPs)
	_, err = client.SetAllowedIPs(ctx, created.ID, []string{"not-an-ip"})
	var apiErr *rpcctl.APIError
	check(errors.As(err, &apiErr), "a bad IP was accepted: %v", err)

	watch, err := client.AddressWatch.Add(ctx, "eth", address)
	must(err, "Add")
	check(watch.Created, "watch not created: %+v", watch)
	listed := false
	must(client.AddressWatch.ForEachAddress(ctx, rpcctl.ListWatchesParams{NetworkSlug: "eth"}, func(w rpcctl.WatchedAddress) error {
		listed = listed || w.WatchID == watch.WatchID
		return nil
	}), "ForEachAddress")
	check(listed, "watch %s not listed", watch.WatchID)

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
		deliveries <- delivery{webhookID: r.Header.Get("X-Webhook-Id"), event: event.Raw, wrongSecretRefused: wrong != nil}
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
	var d delivery
	for d.webhookID != queued.WebhookID {
		select {
		case d = <-deliveries:
		case <-time.After(20 * time.Second):
			check(false, "no verified delivery of %s within 20 s", queued.WebhookID)
		}
	}
	out, _ := json.Marshal(map[string]interface{}{
		"endpoint_id":          created.ID,
		"allowed_ips":          updated.AllowedIPs,
		"bad_request":          map[string]interface{}{"status": apiErr.StatusCode, "error": apiErr.Message},
		"watch_id":             watch.WatchID,
		"webhook_id":           queued.WebhookID,
		"event":                d.event,
		"wrong_secret_refused": d.wrongSecretRefused,
	})
	fmt.Println(string(out))
}
