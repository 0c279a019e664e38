package target

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/charmbracelet/x/term"
	"github.com/spf13/pflag"

	"inflight/oauth"
	"inflight/redact"
)

// authFlags are the OAuth flags every command that talks to a server
// shares.
type authFlags struct {
	clientID          string
	clientSecret      string
	clientCredentials bool
	clientKeyFile     string
	clientKey         *oauth.ClientKey
	scopes            []string
	callbackURL       string
	clientMetadataURL string
	noBrowser         bool
	noAuth            bool
}

func (a *authFlags) add(fs *pflag.FlagSet) {
	fs.StringVar(&a.clientID, "client-id", "", "OAuth: a pre-registered client `ID` (without one inflight registers itself)")
	fs.StringVar(&a.clientSecret, "client-secret", "", "OAuth: the pre-registered client's `SECRET`")
	fs.BoolVar(&a.clientCredentials, "client-credentials", false, "OAuth: the client credentials grant with --client-id and --client-secret or --client-key-file (machine to machine, no browser)")
	fs.StringVar(&a.clientKeyFile, "client-key-file", "", "OAuth: with --client-credentials, sign the client's JWT assertion with the private key in `PEM` instead of a secret (private_key_jwt, RFC 7523; ES256 or RS256, from the key)")
	fs.StringArrayVar(&a.scopes, "scope", nil, "OAuth: ask for `SCOPE` instead of the discovered scopes (repeatable)")
	fs.StringVar(&a.clientMetadataURL, "client-metadata-url", "", "OAuth: the HTTPS `URL` of a client ID metadata document describing inflight (its client_id), used where the server supports them")
	fs.StringVar(&a.callbackURL, "callback-url", "", "OAuth: the loopback redirect `URL` the browser step listens on (default "+oauth.DefaultCallbackURL+")")
	fs.BoolVar(&a.noBrowser, "no-browser", false, "OAuth: only print the authorization URL, open no browser (SSH sessions)")
	fs.BoolVar(&a.noAuth, "no-auth", false, "OAuth: never authorize; a 401 ends the connection")
}

func (a *authFlags) addSecrets(b *redact.Builder) {
	b.AddValue(a.clientSecret)
}

// resolve sets t.Auth for a URL target: OAuth runs unless -H gives an
// Authorization header or --no-auth says not to. The browser step may
// happen when stdin is a terminal (a person is there) or $BROWSER says how
// to open one; otherwise only a kept token, its refresh, or client
// credentials are used.
func (a *authFlags) resolve(t *Target) error {
	set := a.clientID != "" || a.clientSecret != "" || a.clientCredentials || a.clientKeyFile != "" || len(a.scopes) > 0 || a.callbackURL != "" || a.noBrowser || a.clientMetadataURL != ""
	if off, err := a.noOAuth(t, set); off || err != nil {
		return err
	}
	if err := a.check(t); err != nil {
		return err
	}
	t.Auth = a.config(t)
	return nil
}

// noOAuth reports whether OAuth is off for t — not a URL, --no-auth, or an
// Authorization header given with -H — refusing OAuth flags (set) that
// would then do nothing.
func (a *authFlags) noOAuth(t *Target, set bool) (off bool, err error) {
	if t.URL == "" {
		if set {
			return true, errors.New("the OAuth flags (--client-id, --client-secret, --client-credentials, --client-key-file, --client-metadata-url, --scope, --callback-url, --no-browser) apply to a URL server")
		}
		return true, nil
	}
	if a.noAuth {
		if set {
			return true, errors.New("--no-auth goes with no other OAuth flag")
		}
		t.Auth = nil
		return true, nil
	}
	if t.Headers.Get("Authorization") != "" {
		if set {
			return true, errors.New("-H 'Authorization: …' gives the credentials itself; it goes with no OAuth flag")
		}
		t.Auth = nil
		return true, nil
	}
	return false, nil
}

// check refuses OAuth flags that do not go together, or with t's config
// entry, and a callback or client metadata URL that cannot serve.
func (a *authFlags) check(t *Target) error {
	// A config entry's OAuth client (FromConfig) stands unless a flag
	// names another.
	id, secret := a.clientID, a.clientSecret
	if id == "" && t.Auth != nil {
		id, secret = t.Auth.ClientID, t.Auth.ClientSecret
	}
	if a.clientKeyFile != "" {
		switch {
		case !a.clientCredentials:
			return errors.New("--client-key-file goes with --client-credentials (the key authenticates a machine client)")
		case a.clientSecret != "":
			return errors.New("--client-key-file and --client-secret are two ways to authenticate the client: give one")
		case id == "":
			return errors.New("--client-key-file needs --client-id (the JWT's issuer and subject)")
		}
		raw, err := os.ReadFile(a.clientKeyFile)
		if err != nil {
			return fmt.Errorf("--client-key-file: %w", err)
		}
		if a.clientKey, err = oauth.ParseClientKey(raw); err != nil {
			return fmt.Errorf("--client-key-file %s: %w", a.clientKeyFile, err)
		}
	} else if a.clientCredentials && (id == "" || secret == "") {
		return errors.New("--client-credentials needs --client-id and --client-secret or --client-key-file (or a config entry's client ID and secret)")
	}
	if a.clientSecret != "" && a.clientID == "" {
		return errors.New("--client-secret goes with --client-id")
	}
	if a.callbackURL != "" {
		if err := oauth.CheckCallback(a.callbackURL); err != nil {
			return err
		}
	} else if t.Auth != nil && t.Auth.CallbackURL != "" {
		if err := oauth.CheckCallback(t.Auth.CallbackURL); err != nil {
			return fmt.Errorf("the config entry's oauth.callbackPort: %w", err)
		}
	}
	if raw := a.clientMetadataURL; raw != "" {
		u, err := url.Parse(raw)
		if err != nil || u.Scheme != "https" || u.Host == "" || u.Path == "" || u.Path == "/" {
			return fmt.Errorf("--client-metadata-url %q: want an HTTPS URL with a path (the document's own URL is the client_id)", raw)
		}
	}
	return nil
}

// config is t's OAuth configuration: its config entry's, with the flags
// over it.
func (a *authFlags) config(t *Target) *oauth.Config {
	cfg := t.Auth
	if cfg == nil {
		cfg = &oauth.Config{}
	}
	if a.clientID != "" {
		cfg.ClientID, cfg.ClientSecret = a.clientID, a.clientSecret
	}
	if len(a.scopes) > 0 {
		var scopes []string
		for _, s := range a.scopes {
			scopes = append(scopes, strings.Fields(s)...)
		}
		cfg.Scopes = scopes
	}
	cfg.Server = t.URL
	cfg.ClientCredentials = a.clientCredentials
	if a.clientKey != nil {
		cfg.ClientKey, cfg.ClientSecret = a.clientKey, ""
	}
	if a.callbackURL != "" {
		cfg.CallbackURL = a.callbackURL
	}
	if a.clientMetadataURL != "" {
		cfg.ClientMetadataURL = a.clientMetadataURL
	}
	cfg.NoBrowser = a.noBrowser
	// A person at the terminal can do the browser step; so can a script
	// whose user said how to open a browser ($BROWSER, as other
	// command-line tools read it): call and check then log in and step
	// up as the TUI does.
	cfg.Interactive = term.IsTerminal(os.Stdin.Fd()) || os.Getenv("BROWSER") != ""
	cfg.Prompt = os.Stderr
	if cfg.Store == nil {
		if s, err := oauth.DefaultStore(); err == nil {
			cfg.Store = s
		}
	}
	return cfg
}
