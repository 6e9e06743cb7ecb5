package rpcctl

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
}
