package rpcctl

import "encoding/json"

// Plan is a billing plan.
type Plan struct {
	ID                  int64  `json:"id"`
	Slug                string `json:"slug"`
	Name                string `json:"name"`
	IncludedCredits     int64  `json:"included_credits"`
	RPSLimit            int64  `json:"rps_limit"`
	EndpointsLimit      int64  `json:"endpoints_limit"`
	WebhookAddressSlots int64  `json:"webhook_address_slots"`
}

// AccountUsageSummary is this month's usage of an account.
type AccountUsageSummary struct {
	Period           string `json:"period"`
	Requests         int64  `json:"requests"`
	CreditsUsed      int64  `json:"credits_used"`
	CreditsIncluded  int64  `json:"credits_included"`
	CreditsRemaining int64  `json:"credits_remaining"`
}

// Account is the answer of GET /v1/account.
type Account struct {
	UserID int64               `json:"user_id"`
	Plan   *Plan               `json:"plan"`
	Usage  AccountUsageSummary `json:"usage"`
}

// Endpoint statuses.
const (
	StatusActive = "active"
	StatusPaused = "paused"
)

// Endpoint is a workspace JSON-RPC endpoint.
type Endpoint struct {
	ID                   int64    `json:"id"`
	UUID                 string   `json:"uuid"`
	Name                 string   `json:"name"`
	Status               string   `json:"status"`
	NetworkID            int64    `json:"network_id"`
	NetworkName          string   `json:"network_name"`
	NetworkSlug          string   `json:"network_slug"`
	NetworkEnvironmentID int64    `json:"network_environment_id"`
	EnvSlug              string   `json:"env_slug"`
	URL                  string   `json:"url"`
	RPSLimit             int64    `json:"rps_limit"`
	PlanID               int64    `json:"plan_id"`
	CreatedAt            string   `json:"created_at"`
	Version              *string  `json:"version"`
	BlockHeight          *int64   `json:"block_height"`
	AllowedIPs           []string `json:"allowed_ips"`
}

// CreateEndpointInput creates an endpoint: give NetworkEnvironmentID, or NetworkID with EnvSlug.
type CreateEndpointInput struct {
	Name                 string `json:"name"`
	NetworkEnvironmentID int64  `json:"network_environment_id,omitempty"`
	NetworkID            int64  `json:"network_id,omitempty"`
	EnvSlug              string `json:"env_slug,omitempty"`
}

// AvailableNetwork is a network the plan can create endpoints on.
type AvailableNetwork struct {
	ID               int64    `json:"id"`
	UUID             string   `json:"uuid"`
	Name             string   `json:"name"`
	Slug             string   `json:"slug"`
	Sort             int64    `json:"sort"`
	EnvironmentKinds []string `json:"environment_kinds"`
}

// AvailableNetworks is the answer of GET /v1/endpoints/available-networks.
type AvailableNetworks struct {
	Networks            []AvailableNetwork `json:"networks"`
	NetworkLimit        *int64             `json:"network_limit"`
	AllowedNetworkSlugs []string           `json:"allowed_network_slugs"`
}

// UsagePoint is one day of usage.
type UsagePoint struct {
	Date     string `json:"date"`
	Requests int64  `json:"requests"`
	Credits  int64  `json:"credits"`
}

// MethodUsage is the usage of one RPC method.
type MethodUsage struct {
	Method   string `json:"method"`
	Requests int64  `json:"requests"`
	Credits  int64  `json:"credits"`
}

// Usage is daily usage over a window of Days days, oldest first.
type Usage struct {
	Days          int           `json:"days"`
	TotalRequests int64         `json:"total_requests"`
	TotalCredits  int64         `json:"total_credits"`
	Series        []UsagePoint  `json:"series"`
	Methods       []MethodUsage `json:"methods"`
}

// WatchedAddress is an address under Address Watch.
type WatchedAddress struct {
	WatchID     string `json:"watch_id"`
	NetworkSlug string `json:"network_slug"`
	Address     string `json:"address"`
	CreatedAt   string `json:"created_at"`
}

// AddedWatch is the answer of adding a watch; Created is false when it already existed.
type AddedWatch struct {
	WatchedAddress
	Created bool `json:"created"`
}

// WatchList is one page of watched addresses.
type WatchList struct {
	Addresses []WatchedAddress `json:"addresses"`
	Page      int              `json:"page"`
	PerPage   int              `json:"per_page"`
	Total     int              `json:"total"`
}

// ListWatchesParams filters and pages the watched addresses; zero values are left out.
type ListWatchesParams struct {
	NetworkSlug string
	Address     string
	Page        int
	PerPage     int
}

// WatchAccount is the Address Watch slots and webhook flags.
type WatchAccount struct {
	SlotsTotal        int64 `json:"slots_total"`
	SlotsUsed         int64 `json:"slots_used"`
	SlotsFree         int64 `json:"slots_free"`
	WebhookConfigured bool  `json:"webhook_configured"`
	WebhookEnabled    bool  `json:"webhook_enabled"`
}

// EventsParams selects a page of the event feed; After "latest" returns where a follower starts.
type EventsParams struct {
	After   string
	Limit   int
	Network string
	Type    string
	WatchID string
}

// EventPage is a page of the event feed; pass NextAfter back as After.
type EventPage struct {
	Events    []WebhookEvent `json:"events"`
	NextAfter *string        `json:"next_after"`
	// RetentionDays is how long events are kept; nil: for ever.
	RetentionDays *int `json:"retention_days"`
}

// WebhookEventFilters is the flat events object of the webhook configuration.
type WebhookEventFilters struct {
	Payment         bool     `json:"payment"`
	PaymentNetworks []string `json:"payment_networks"`
	Payout          bool     `json:"payout"`
	PayoutNetworks  []string `json:"payout_networks"`
	Block           bool     `json:"block"`
	BlockNetworks   []string `json:"block_networks"`
}

// WebhookSettings is the webhook configuration and the egress IPs to allow.
type WebhookSettings struct {
	URL       *string             `json:"url"`
	Enabled   bool                `json:"enabled"`
	Events    WebhookEventFilters `json:"events"`
	EgressIPs []string            `json:"egress_ips"`
}

// SetWebhookInput replaces the webhook URL and switch. Events nil keeps every filter; otherwise
// the keys present in the map replace theirs (e.g. {"block": false}).
type SetWebhookInput struct {
	URL     string                 `json:"url"`
	Enabled bool                   `json:"enabled"`
	Events  map[string]interface{} `json:"events,omitempty"`
}

// QueuedTest is the answer of a test delivery.
type QueuedTest struct {
	Queued    bool   `json:"queued"`
	WebhookID string `json:"webhook_id"`
	Body      string `json:"body"`
}

// WebhookAttempt is one try of a delivery.
type WebhookAttempt struct {
	Attempt     int     `json:"attempt"`
	StartedAt   string  `json:"started_at"`
	StatusCode  *int    `json:"status_code"`
	DurationMS  int64   `json:"duration_ms"`
	Error       *string `json:"error"`
	NextRetryAt *string `json:"next_retry_at"`
	// ResponseExcerpt is the first bytes of the receiver's answer, for debugging a failing receiver.
	ResponseExcerpt *string `json:"response_excerpt"`
}

// WebhookDelivery is a delivery with every attempt.
type WebhookDelivery struct {
	DeliveryID     string           `json:"delivery_id"`
	WebhookID      string           `json:"webhook_id"`
	EventID        *string          `json:"event_id"`
	Type           string           `json:"type"`
	Network        string           `json:"network"`
	Test           bool             `json:"test"`
	Status         string           `json:"status"`
	AttemptCount   int              `json:"attempt_count"`
	NextRetryAt    *string          `json:"next_retry_at"`
	LastStatusCode *int             `json:"last_status_code"`
	LastError      *string          `json:"last_error"`
	CreatedAt      string           `json:"created_at"`
	DeliveredAt    *string          `json:"delivered_at"`
	Attempts       []WebhookAttempt `json:"attempts"`
}

// DeliveriesParams selects a page of deliveries, newest first; zero values are left out.
type DeliveriesParams struct {
	Limit   int
	Before  string
	Status  string
	EventID string
}

// DeliveryPage is a page of deliveries; pass NextBefore back as Before.
type DeliveryPage struct {
	Deliveries []WebhookDelivery `json:"deliveries"`
	NextBefore *string           `json:"next_before"`
	// RetentionDays is how long finished deliveries are kept; nil: for ever.
	RetentionDays *int `json:"retention_days"`
}

// Payment order statuses.
const (
	PaymentPending   = "pending"
	PaymentSeen      = "seen"
	PaymentAMLCheck  = "aml_check"
	PaymentPaid      = "paid"
	PaymentFailed    = "failed"
	PaymentUnderpaid = "underpaid"
	PaymentExpired   = "expired"
)

// Payment is a payment order. Amounts are decimal strings in units; the *Raw ones are integer
// strings in base units.
type Payment struct {
	PaymentID         string   `json:"payment_id"`
	OrderID           string   `json:"order_id"`
	Status            string   `json:"status"`
	Network           string   `json:"network"`
	Asset             string   `json:"asset"`
	AssetSymbol       string   `json:"asset_symbol"`
	Decimals          int      `json:"decimals"`
	Address           string   `json:"address"`
	WatchID           string   `json:"watch_id"`
	DerivationIndex   *int64   `json:"derivation_index"`
	Amount            string   `json:"amount"`
	AmountRaw         string   `json:"amount_raw"`
	AmountReceived    string   `json:"amount_received"`
	AmountReceivedRaw string   `json:"amount_received_raw"`
	TxHashes          []string `json:"tx_hashes"`
	// Confirmations is how many confirmations the network requires before funds count.
	Confirmations int     `json:"confirmations"`
	ExpiresAt     string  `json:"expires_at"`
	CreatedAt     string  `json:"created_at"`
	UpdatedAt     string  `json:"updated_at"`
	WebhookURL    *string `json:"webhook_url"`
	// Metadata is the order's metadata object as sent, or null.
	Metadata json.RawMessage `json:"metadata"`
	AML      *AMLResult      `json:"aml"`
	// Reason says why a failed or expired order ended: canceled, aml_rejected, partial, late, reorg.
	Reason   *string `json:"reason"`
	Late     bool    `json:"late"`
	Overpaid bool    `json:"overpaid"`
	// Lifecycle is every status taken, joined by ">": "pending>seen>aml_check>paid".
	Lifecycle string `json:"lifecycle"`
	// CheckoutURL is the hosted checkout page to send the customer to; the payment id in it
	// is its only credential.
	CheckoutURL string `json:"checkout_url"`
}

// CreatePaymentInput is a new order; zero optional fields are left out.
type CreatePaymentInput struct {
	// OrderID is your order's id (1..128 printable ASCII characters), unique per account.
	OrderID     string `json:"order_id"`
	NetworkSlug string `json:"network_slug"`
	// Amount is a decimal string such as "12.50", with at most the asset's decimals.
	Amount string `json:"amount"`
	// Asset is "native" (the default), a token symbol such as "USDC", or the token's id.
	Asset string `json:"asset,omitempty"`
	// Address receives the payment; empty derives one from the account's xpub.
	Address string `json:"address,omitempty"`
	// ExpiresIn is in seconds, 10..604800; 0 means the default, 3600.
	ExpiresIn  int    `json:"expires_in,omitempty"`
	WebhookURL string `json:"webhook_url,omitempty"`
	// Metadata is returned on the order and in every webhook (up to 4 KiB of JSON).
	Metadata map[string]interface{} `json:"metadata,omitempty"`
}

// CreatedPayment is the answer of Create; Created is false when the order already existed.
type CreatedPayment struct {
	Payment Payment `json:"payment"`
	Created bool    `json:"created"`
}

// ListPaymentsParams filters and pages the orders; zero values are left out.
type ListPaymentsParams struct {
	OrderID string
	// Status is one of the Payment* status constants.
	Status  string
	Network string
	Page    int
	// PerPage is 1..200; 0 means the service's default, 50.
	PerPage int
}

// PaymentList is one page of orders, newest first.
type PaymentList struct {
	Payments []Payment `json:"payments"`
	Page     int       `json:"page"`
	PerPage  int       `json:"per_page"`
	Total    int       `json:"total"`
}

// PaymentXpubs are the extended public keys addresses are derived from.
type PaymentXpubs struct {
	EVM  string `json:"evm,omitempty"`
	UTXO string `json:"utxo,omitempty"`
	Tron string `json:"tron,omitempty"`
}

// DerivedAddress shows where derivation from an xpub starts and stands.
type DerivedAddress struct {
	FirstAddress string `json:"first_address"`
	NextIndex    int64  `json:"next_index"`
	// Network names the network whose prefixes FirstAddress is written in (UTXO only).
	Network string `json:"network,omitempty"`
}

// PaymentSettings are the account's payment settings.
type PaymentSettings struct {
	Xpubs                 PaymentXpubs `json:"xpubs"`
	AMLFailAt             string       `json:"aml_fail_at"`
	UnderpaidToleranceBPS int          `json:"underpaid_tolerance_bps"`
	AcceptLate            bool         `json:"accept_late"`
	// DisplayName is the merchant's name on the checkout page; nil: none.
	DisplayName *string `json:"display_name"`
	// RedirectURL is where the checkout page sends a paid customer (with ?order_id=); nil: nowhere.
	RedirectURL *string          `json:"redirect_url"`
	Derived     DerivedAddresses `json:"derived"`
}

// DerivedAddresses shows derivation per chain family; each is nil without its xpub.
type DerivedAddresses struct {
	EVM  *DerivedAddress `json:"evm,omitempty"`
	UTXO *DerivedAddress `json:"utxo,omitempty"`
	Tron *DerivedAddress `json:"tron,omitempty"`
}

// PaymentSettingsInput changes payment settings; nil fields keep their value.
type PaymentSettingsInput struct {
	// EVMXpub is an extended public key (xpub... or tpub...); "" removes it. A new xpub
	// restarts derivation at index 0.
	EVMXpub *string `json:"-"`
	// UTXOXpub is a Bitcoin-style wallet's account key (zpub/ypub/xpub; vpub/upub/tpub on
	// test networks); "" removes it.
	UTXOXpub *string `json:"-"`
	// TronXpub is the xpub of m/44'/195'/0'; "" removes it.
	TronXpub *string `json:"-"`
	// AMLFailAt is the lowest risk level that fails an order: "medium", "high" or "severe".
	AMLFailAt *string `json:"aml_fail_at,omitempty"`
	// UnderpaidToleranceBPS is how far (0..10000 basis points) an order may fall short and still be paid.
	UnderpaidToleranceBPS *int  `json:"underpaid_tolerance_bps,omitempty"`
	AcceptLate            *bool `json:"accept_late,omitempty"`
	// DisplayName is the name on the checkout page; "" removes it.
	DisplayName *string `json:"display_name,omitempty"`
	// RedirectURL is the https page the checkout page sends a paid customer to; "" removes it.
	RedirectURL *string `json:"redirect_url,omitempty"`
}

// MarshalJSON nests the xpubs as the API's {"xpubs": {"evm": ..., "utxo": ..., "tron": ...}}.
func (in PaymentSettingsInput) MarshalJSON() ([]byte, error) {
	type plain PaymentSettingsInput
	var xpubs *map[string]string
	for family, key := range map[string]*string{"evm": in.EVMXpub, "utxo": in.UTXOXpub, "tron": in.TronXpub} {
		if key == nil {
			continue
		}
		if xpubs == nil {
			xpubs = &map[string]string{}
		}
		(*xpubs)[family] = *key
	}
	return json.Marshal(struct {
		Xpubs *map[string]string `json:"xpubs,omitempty"`
		plain
	}{xpubs, plain(in)})
}
