package oauth

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"golang.org/x/oauth2"
)

// Store keeps tokens, one file per server and issuer, in a directory of the
// user's own (0700; files 0600). Nothing it holds is ever printed: Entry's
// String names the server, the issuer and the scopes, never a token or a
// secret.
type Store struct{ Dir string }

// DefaultStore is os.UserConfigDir()/inflight/tokens.
func DefaultStore() (*Store, error) {
	d, err := os.UserConfigDir()
	if err != nil {
		return nil, fmt.Errorf("no user config directory to keep tokens in: %w", err)
	}
	return &Store{Dir: filepath.Join(d, "inflight", "tokens")}, nil
}

// Entry is what a login leaves: the token and what refreshing it needs
// (the client it was issued to and the token endpoint).
type Entry struct {
	Server string `json:"server"`
	Issuer string `json:"issuer"`
	// ClientID and ClientSecret are the client the token was issued to;
	// Registered says inflight registered it itself (dynamic client
	// registration), so that a later login reuses it instead of
	// registering again.
	ClientID     string           `json:"client_id"`
	ClientSecret string           `json:"client_secret,omitempty"`
	Registered   bool             `json:"registered,omitempty"`
	AuthURL      string           `json:"authorization_endpoint,omitempty"`
	TokenURL     string           `json:"token_endpoint"`
	AuthStyle    oauth2.AuthStyle `json:"auth_style,omitempty"`
	Scopes       []string         `json:"scopes,omitempty"`
	Token        *oauth2.Token    `json:"token"`
	Saved        time.Time        `json:"saved"`
}

// String describes the entry without a token or a secret.
func (e *Entry) String() string {
	s := fmt.Sprintf("%s (issuer %s, client %s", e.Server, e.Issuer, e.ClientID)
	if len(e.Scopes) > 0 {
		s += ", scopes " + strings.Join(e.Scopes, " ")
	}
	return s + ")"
}

// Config is the oauth2 configuration that refreshes the entry's token.
func (e *Entry) Config() *oauth2.Config {
	return &oauth2.Config{
		ClientID:     e.ClientID,
		ClientSecret: e.ClientSecret,
		Endpoint:     oauth2.Endpoint{AuthURL: e.AuthURL, TokenURL: e.TokenURL, AuthStyle: e.AuthStyle},
		Scopes:       e.Scopes,
	}
}

// ServerKey is the form of a server URL tokens are kept under: scheme and
// host lower-cased, no user info, query or fragment (which may carry a
// secret and do not name another resource).
func ServerKey(server string) string {
	u, err := url.Parse(server)
	if err != nil {
		return server
	}
	u.Scheme = strings.ToLower(u.Scheme)
	u.Host = strings.ToLower(u.Host)
	u.User, u.RawQuery, u.Fragment, u.RawFragment, u.ForceQuery = nil, "", "", "", false
	return u.String()
}

func hash(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:8])
}

func (s *Store) path(server, issuer string) string {
	return filepath.Join(s.Dir, hash(ServerKey(server))+"-"+hash(issuer)+".json")
}

// Save writes e (0600, through a temporary file and a rename, in a 0700
// directory).
func (s *Store) Save(e *Entry) error {
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return err
	}
	// MkdirAll leaves an existing directory as it was.
	if err := os.Chmod(s.Dir, 0o700); err != nil {
		return err
	}
	cp := *e
	cp.Server = ServerKey(e.Server)
	cp.Saved = time.Now().UTC()
	data, err := json.MarshalIndent(&cp, "", "  ")
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(s.Dir, ".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, s.path(e.Server, e.Issuer))
}

// List returns the entries kept for server ("" for every server), the
// newest first. A file that does not parse is skipped.
func (s *Store) List(server string) ([]*Entry, error) {
	pattern := "*.json"
	if server != "" {
		pattern = hash(ServerKey(server)) + "-*.json"
	}
	names, err := filepath.Glob(filepath.Join(s.Dir, pattern))
	if err != nil {
		return nil, err
	}
	var out []*Entry
	for _, name := range names {
		data, err := os.ReadFile(name)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return nil, err
		}
		var e Entry
		if json.Unmarshal(data, &e) != nil || e.Token == nil {
			continue
		}
		out = append(out, &e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Saved.After(out[j].Saved) })
	return out, nil
}

// Load is the newest entry for server, nil when there is none.
func (s *Store) Load(server string) (*Entry, error) {
	es, err := s.List(server)
	if err != nil || len(es) == 0 {
		return nil, err
	}
	return es[0], nil
}

// Delete removes every entry kept for server and says how many it removed.
func (s *Store) Delete(server string) (int, error) {
	names, err := filepath.Glob(filepath.Join(s.Dir, hash(ServerKey(server))+"-*.json"))
	if err != nil {
		return 0, err
	}
	n := 0
	for _, name := range names {
		if err := os.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return n, err
		}
		n++
	}
	return n, nil
}
