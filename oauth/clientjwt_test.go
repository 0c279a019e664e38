package oauth_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"strings"
	"testing"
	"time"

	"inflight/internal/oauthas"
	"inflight/oauth"
)

func pemOf(t *testing.T, key any) []byte {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
}

// A machine client authenticated with a JWT it signs (private_key_jwt):
// the algorithm comes from the key (ES256 for P-256, RS256 for RSA), the
// server checks the signature, iss, sub, aud, exp and a fresh jti, and a
// token that expired is replaced with a new assertion, never the old one.
func TestClientCredentialsPrivateKeyJWT(t *testing.T) {
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	for _, tc := range []struct {
		alg string
		key any
		pub any
	}{
		{"ES256", ec, &ec.PublicKey},
		{"RS256", rsaKey, &rsaKey.PublicKey},
	} {
		t.Run(tc.alg, func(t *testing.T) {
			w := newWorld(t, oauthas.Config{ClientCredentials: true, AuthMethods: []string{"private_key_jwt"}, TokenLifetime: 11 * time.Second,
				Clients: map[string]oauthas.Client{"machine": {Key: tc.pub}}}, oauthas.Resource{})
			key, err := oauth.ParseClientKey(pemOf(t, tc.key))
			if err != nil || key.Alg != tc.alg {
				t.Fatalf("key %+v, err %v; want %s", key, err, tc.alg)
			}
			cfg := oauth.Config{Server: w.url, ClientCredentials: true, ClientID: "machine", ClientKey: key}
			tr := w.transport(cfg)
			w.mustOK(tr)
			if w.as.Count("private_key_jwt") != 1 || w.as.Count("client_credentials") != 1 {
				t.Fatalf("assertions %d, grants %d\n%s", w.as.Count("private_key_jwt"), w.as.Count("client_credentials"), w.dump())
			}
			// golang.org/x/oauth2 takes a token as expired 10s early: this
			// one, 1s after it came.
			time.Sleep(1100 * time.Millisecond)
			w.mustOK(tr)
			if w.as.Count("private_key_jwt") != 2 {
				t.Fatalf("after expiry: %d assertions accepted, want a second, fresh one\n%s", w.as.Count("private_key_jwt"), w.dump())
			}
		})
	}
}

// A server that takes no private_key_jwt, or another algorithm, is refused
// with what to do; a key of the wrong kind is refused before anything is
// sent.
func TestPrivateKeyJWTRefusals(t *testing.T) {
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	key, _ := oauth.ParseClientKey(pemOf(t, ec))
	for _, tc := range []struct {
		cfg  oauthas.Config
		want string
	}{
		{oauthas.Config{ClientCredentials: true, AuthMethods: []string{"client_secret_basic"}}, "does not take private_key_jwt"},
		{oauthas.Config{ClientCredentials: true, AuthMethods: []string{"private_key_jwt"}, SigningAlgs: []string{"RS256"}}, "signed with RS256, and the key signs with ES256"},
	} {
		tc.cfg.Clients = map[string]oauthas.Client{"machine": {Key: &ec.PublicKey}}
		w := newWorld(t, tc.cfg, oauthas.Resource{})
		_, err := w.post(w.transport(oauth.Config{Server: w.url, ClientCredentials: true, ClientID: "machine", ClientKey: key}))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("err %v, want %q", err, tc.want)
		}
	}
	small, _ := rsa.GenerateKey(rand.Reader, 1024)
	for _, raw := range [][]byte{pemOf(t, small), []byte("not a key"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte{1}})} {
		if _, err := oauth.ParseClientKey(raw); err == nil {
			t.Errorf("ParseClientKey(%.30q) accepted it", raw)
		}
	}
}
