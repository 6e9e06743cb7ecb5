package rpcctl

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// The repository's vectors live in test/fixtures at its root.
var fixtures = filepath.Join("..", "..", "test", "fixtures")

type signatureCase struct {
	Name            string `json:"name"`
	Secret          string `json:"secret"`
	Timestamp       int64  `json:"timestamp"`
	Method          string `json:"method"`
	RequestTarget   string `json:"request_target"`
	Body            string `json:"body"`
	BodySHA256      string `json:"body_sha256"`
	CanonicalString string `json:"canonical_string"`
	Signature       string `json:"signature"`
}

type webhookCase struct {
	Name        string `json:"name"`
	Secret      string `json:"secret"`
	Timestamp   int64  `json:"timestamp"`
	Body        string `json:"body"`
	SignedInput string `json:"signed_input"`
	Signature   string `json:"signature"`
}

func loadCases(t *testing.T, name string, out interface{}) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(fixtures, name))
	if err != nil {
		t.Fatal(err)
	}
	var file struct{ Cases json.RawMessage }
	if err := json.Unmarshal(data, &file); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(file.Cases, out); err != nil {
		t.Fatal(err)
	}
}
