// Package rpcctl is the official Go client of the rpcctl Public API.
//
// A Client signs every request (X-Api-Key, X-Timestamp, X-Signature), has a method per
// route, retries rate-limited (429) and failed idempotent requests a bounded number of times,
// and takes a context on every call. NewClient reads PUBLIC_API_KEY, PUBLIC_API_SECRET and
// PUBLIC_API_BASE from the environment for settings left empty.
//
// ConstructEvent and VerifyWebhook check the signature of the webhooks the service sends.
//
// The package uses the standard library only.
package rpcctl
