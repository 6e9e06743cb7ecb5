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
	PaymentID   string `json:"payment_id"`
	OrderID     string `json:"order_id"`
	Status      string `json:"status"`
	Network     string `json:"network"`
	Asset       string `json:"asset"`
	AssetSymbol string `json:"asset_symbol"`
	Decimals    int    `json:"decimals"`
	// Address is where the customer pays: the order's own address, or on Solana the merchant's wallet.
	Address string `json:"address"`
	// Reference is the Solana Pay reference (a public key) the customer's transaction names,
	// which tells this order's payment apart from others to the same wallet; nil elsewhere.
	Reference         *string  `json:"reference"`
	WatchID           string   `json:"watch_id"`
	DerivationIndex   *int64   `json:"derivation_index"`
	Amount            string   `json:"amount"`
	AmountRaw         string   `json:"amount_raw"`
	AmountReceived    string   `json:"amount_received"`
	AmountReceivedRaw string   `json:"amount_received_raw"`
	TxHashes          []string `json:"tx_hashes"`
	// PriceAmount and PriceCurrency are the fiat price of an order priced in a currency, and
	// Rate (PriceCurrency per asset unit), RateSource ("static" or "http") and RateAt the rate
	// locked at creation; all nil for an order priced in the asset.
	PriceAmount   *string `json:"price_amount"`
	PriceCurrency *string `json:"price_currency"`
	Rate          *string `json:"rate"`
	RateSource    *string `json:"rate_source"`
	RateAt        *string `json:"rate_at"`
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
	Amount string `json:"amount,omitempty"`
	// PriceAmount (a decimal string such as "19.99") in PriceCurrency (ISO 4217, e.g. "USD")
	// instead of Amount: the service converts it at a rate it locks now, rounded up to the
	// asset's decimals; without a fresh rate it answers 400 "Rate unavailable for ETH/USD.".
	PriceAmount   string `json:"price_amount,omitempty"`
	PriceCurrency string `json:"price_currency,omitempty"`
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
	RedirectURL *string `json:"redirect_url"`
	// Wallets are the merchant's wallets that orders of a family share (Solana).
	Wallets PaymentWallets `json:"wallets"`
	// PayoutsApprovalOver: refunds and payouts worth more need a second owner's approval; nil: off.
	PayoutsApprovalOver *ApprovalThreshold `json:"payouts_approval_over"`
	Derived             DerivedAddresses   `json:"derived"`
}

// PaymentWallets are the merchant's wallets per family whose orders share one, each order told
// apart by its own Solana Pay reference.
type PaymentWallets struct {
	Solana string `json:"solana,omitempty"`
}

// ApprovalThreshold is an amount (a decimal string) in an ISO 4217 currency.
type ApprovalThreshold struct {
	Amount   string `json:"amount"`
	Currency string `json:"currency"`
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
	// SolanaWallet is the merchant's Solana address that Solana orders are paid to
	// (wallets.solana); "" removes it.
	SolanaWallet *string `json:"-"`
	// PayoutsApprovalOver makes refunds and payouts worth more wait for a second owner's
	// approval; a zero ApprovalThreshold{} turns that off.
	PayoutsApprovalOver *ApprovalThreshold `json:"-"`
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
	var wallets *map[string]string
	if in.SolanaWallet != nil {
		wallets = &map[string]string{"solana": *in.SolanaWallet}
	}
	var threshold interface{}
	if in.PayoutsApprovalOver != nil {
		threshold = in.PayoutsApprovalOver
		if *in.PayoutsApprovalOver == (ApprovalThreshold{}) {
			threshold = json.RawMessage("null")
		}
	}
	return json.Marshal(struct {
		Xpubs   *map[string]string `json:"xpubs,omitempty"`
		Wallets *map[string]string `json:"wallets,omitempty"`
		// A pointer to an interface holding null: sent as null, left out when nil.
		Threshold *interface{} `json:"payouts_approval_over,omitempty"`
		plain
	}{xpubs, wallets, optional(threshold), plain(in)})
}

func optional(v interface{}) *interface{} {
	if v == nil {
		return nil
	}
	return &v
}

// Payout and refund line statuses, in the order a line can take them.
const (
	PayoutAwaitingApproval = "awaiting_approval"
	PayoutAwaitingAddress  = "awaiting_address"
	PayoutAwaitingPayment  = "awaiting_payment"
	PayoutSent             = "sent"
	PayoutCompleted        = "completed"
	PayoutCanceled         = "canceled"
)

// PaymentRequest is what the merchant's wallet is asked to pay: a BIP21 (UTXO) or EIP-681 (EVM)
// URI, or the plain address, and its QR code ("" in lists).
type PaymentRequest struct {
	URI   string `json:"uri"`
	QRSVG string `json:"qr_svg"`
}

// PayoutLineFields are a payout line's and a refund's. Amount is a decimal string in units of
// the asset, AmountRaw an integer string in base units.
type PayoutLineFields struct {
	Status      string `json:"status"`
	Network     string `json:"network"`
	Asset       string `json:"asset"`
	AssetSymbol string `json:"asset_symbol"`
	Decimals    int    `json:"decimals"`
	// Address is nil while a refund waits for the customer's address.
	Address   *string `json:"address"`
	Amount    string  `json:"amount"`
	AmountRaw string  `json:"amount_raw"`
	// PriceAmount in PriceCurrency at Rate (currency per asset unit, locked at creation); nil without a fiat price.
	PriceAmount   *string `json:"price_amount"`
	PriceCurrency *string `json:"price_currency"`
	Rate          *string `json:"rate"`
	Reference     *string `json:"reference"`
	// TxHash is the matching transfer, once one is in a block.
	TxHash *string `json:"tx_hash"`
	// ExpectedTx is a signed transaction submitted for it: only that one matches.
	ExpectedTx *string `json:"expected_tx"`
	Lifecycle  string  `json:"lifecycle"`
	// PaymentRequest is nil until approved, while there is no address, and once paid.
	PaymentRequest *PaymentRequest `json:"payment_request"`
	UpdatedAt      string          `json:"updated_at"`
}

// PayoutLine is one line of a payout; Line is its 1-based position.
type PayoutLine struct {
	Line int `json:"line"`
	PayoutLineFields
}

// ApprovalFields say whether a payout or refund waits for a second owner.
type ApprovalFields struct {
	// Approval is "not_needed", "awaiting" or "approved".
	Approval string `json:"approval"`
	// ApprovalReason is "role" (a developer prepared it) or "amount" (above the threshold); nil when not needed.
	ApprovalReason *string `json:"approval_reason"`
	CreatedBy      string  `json:"created_by"`
	ApprovedBy     *string `json:"approved_by"`
	ApprovedAt     *string `json:"approved_at"`
	FiatTotal      *string `json:"fiat_total"`
	FiatCurrency   *string `json:"fiat_currency"`
}

// Payout is a batch of lines; Status is the least advanced of its lines not canceled (canceled
// when all are). Lines is empty in lists: Get returns them.
type Payout struct {
	PayoutID string `json:"payout_id"`
	Status   string `json:"status"`
	ApprovalFields
	Lines     []PayoutLine `json:"lines"`
	LineCount int          `json:"line_count"`
	CreatedAt string       `json:"created_at"`
	UpdatedAt string       `json:"updated_at"`
}

// RefundLink is the page where the customer of a refund without address gives one.
type RefundLink struct {
	// URL is shown once, at creation; nil afterwards.
	URL       *string `json:"url"`
	ExpiresAt string  `json:"expires_at"`
	Claimed   bool    `json:"claimed"`
}

// Refund is a refund of a payment order: one line, paid by the merchant's wallet.
type Refund struct {
	RefundID  string `json:"refund_id"`
	PaymentID string `json:"payment_id"`
	OrderID   string `json:"order_id"`
	// AmountKind is "full", "overpaid", "asset", "fiat_locked" or "fiat_current".
	AmountKind string `json:"amount_kind"`
	ApprovalFields
	PayoutLineFields
	RefundLink *RefundLink `json:"refund_link"`
	CreatedAt  string      `json:"created_at"`
}

// CreateRefundInput is a refund; zero fields are left out (Amount "" means "full").
type CreateRefundInput struct {
	// Amount is "full" (what the order received less earlier refunds), "overpaid", or a decimal
	// string in the order's asset.
	Amount string `json:"amount,omitempty"`
	// PriceAmount instead of Amount: a sum in the order's fiat currency at Rate "locked" or "current".
	PriceAmount string `json:"price_amount,omitempty"`
	Rate        string `json:"rate,omitempty"`
	// Address is the customer's; empty: the answer carries a refund link for the customer to give one.
	Address   string `json:"address,omitempty"`
	Reference string `json:"reference,omitempty"`
	// LinkExpiresIn is how long the refund link works, in seconds (300..2592000; 0: 7 days).
	LinkExpiresIn int `json:"link_expires_in,omitempty"`
}

// PayoutLineInput is one line of a new payout: Amount in the asset, or PriceAmount in PriceCurrency.
type PayoutLineInput struct {
	Network string `json:"network"`
	// Asset is "native" (the default) or a listed token of the network.
	Asset         string `json:"asset,omitempty"`
	Address       string `json:"address"`
	Amount        string `json:"amount,omitempty"`
	PriceAmount   string `json:"price_amount,omitempty"`
	PriceCurrency string `json:"price_currency,omitempty"`
	Reference     string `json:"reference,omitempty"`
}

// ListPayoutsParams filters and pages the payouts; zero values are left out.
type ListPayoutsParams struct {
	// Status is one of the Payout* status constants.
	Status  string
	Page    int
	PerPage int
}

// PayoutList is one page of payouts, newest first.
type PayoutList struct {
	Payouts []Payout `json:"payouts"`
	Page    int      `json:"page"`
	PerPage int      `json:"per_page"`
	Total   int      `json:"total"`
}

// PayoutPSBT is an unsigned BIP174 PSBT (base64) and its fee in base units.
type PayoutPSBT struct {
	PSBT   string  `json:"psbt"`
	FeeRaw *string `json:"fee_raw"`
}

// SubmitTransactionInput is a signed transaction for a payout's lines.
type SubmitTransactionInput struct {
	// SignedTransaction is hex, or base64 for a finalized PSBT.
	SignedTransaction string `json:"signed_transaction"`
	// Broadcast false only checks and records it; nil sends it (the default).
	Broadcast *bool `json:"broadcast,omitempty"`
}

// SubmittedTransaction is the payout after SubmitTransaction, and the transaction's hash.
type SubmittedTransaction struct {
	Payout Payout `json:"payout"`
	TxHash string `json:"tx_hash"`
}
