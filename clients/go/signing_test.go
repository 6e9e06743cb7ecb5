package rpcctl

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

func TestSigningVectors(t *testing.T) {
	var cases []signatureCase
	loadCases(t, "signatures.json", &cases)
	if len(cases) < 7 {
		t.Fatalf("only %d vectors", len(cases))
	}
	for _, v := range cases {
		t.Run(v.Name, func(t *testing.T) {
			body := []byte(v.Body)
			if got := SHA256Hex(body); got != v.BodySHA256 {
				t.Errorf("body sha256 %s, want %s", got, v.BodySHA256)
			}
			if got := CanonicalString(v.Timestamp, v.Method, v.RequestTarget, body); got != v.CanonicalString {
				t.Errorf("canonical string %q, want %q", got, v.CanonicalString)
			}
			if got := Sign(v.Secret, v.Timestamp, v.Method, v.RequestTarget, body); got != v.Signature {
				t.Errorf("signature %s, want %s", got, v.Signature)
			}
			if !Verify(v.Secret, v.Timestamp, v.Method, v.RequestTarget, body, v.Signature) {
				t.Error("Verify refused the vector's signature")
			}
		})
	}
}

func TestSigningRefusals(t *testing.T) {
	var cases []signatureCase
	loadCases(t, "signatures.json", &cases)
	for _, v := range cases {
		if !strings.HasPrefix(v.Name, "Body with whitespace") {
			continue
		}
		var parsed interface{}
		if err := json.Unmarshal([]byte(v.Body), &parsed); err != nil {
			t.Fatal(err)
		}
		reserialised, _ := json.Marshal(parsed)
		if Verify(v.Secret, v.Timestamp, v.Method, v.RequestTarget, reserialised, v.Signature) {
			t.Error("a re-serialised body verified")
		}
	}
	v := cases[0]
	body := []byte(v.Body)
	if Verify(v.Secret, v.Timestamp, v.Method, v.RequestTarget, body, v.Signature[:len(v.Signature)-1]) {
		t.Error("a truncated signature verified")
	}
	if Verify("other", v.Timestamp, v.Method, v.RequestTarget, body, v.Signature) {
		t.Error("another secret verified")
	}
	if Sign(v.Secret, v.Timestamp, strings.ToLower(v.Method), v.RequestTarget, body) != v.Signature {
		t.Error("the method is not uppercased")
	}
	if got := SignedPath("https://api.example/v1/endpoints/usage?days=7"); got != "/v1/endpoints/usage" {
		t.Errorf("SignedPath %q", got)
	}
	if got := SignedPath("/v1/account#x"); got != "/v1/account" {
		t.Errorf("SignedPath %q", got)
	}
}

func TestSignRequest(t *testing.T) {
	body := []byte(`{"name":"main"}`)
	req, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1:8080/v1/endpoints?x=1", bytes.NewReader(body))
	SignRequest(req, "key-1", "secret-1", body)
	ts := req.Header.Get("X-Timestamp")
	var n int64
	if err := json.Unmarshal([]byte(ts), &n); err != nil {
		t.Fatal(err)
	}
	if req.Header.Get("X-Api-Key") != "key-1" || !Verify("secret-1", n, "POST", "/v1/endpoints", body, req.Header.Get("X-Signature")) {
		t.Errorf("bad headers %v", req.Header)
	}
}
