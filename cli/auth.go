package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"inflight/client"
	"inflight/event"
	"inflight/exitcode"
	"inflight/oauth"
	"inflight/redact"
	"inflight/target"
	"inflight/termsafe"
)

// authCommand is `inflight auth login|status|logout`: the OAuth tokens
// inflight keeps per server and issuer (package oauth). No token or secret
// is ever printed.
func (c *cli) authCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "auth",
		Short: "OAuth: log in to a server, show the tokens kept, log out",
		Long: `OAuth authorization of URL servers. inflight authorizes by itself when a server answers
401 with a bearer challenge and a person is at the terminal; 'auth login' does it ahead,
so that call and check (in a script, with no browser) find the token kept.

Tokens are kept per server and issuer in the user's config directory
(` + storeDirShown() + `, files 0600) and refreshed when they expire. They are never printed.`,
		Args:          cobra.NoArgs,
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	cmd.AddCommand(c.authLoginCommand(), c.authStatusCommand(), c.authLogoutCommand())
	return cmd
}

func storeDirShown() string {
	if s, err := oauth.DefaultStore(); err == nil {
		return s.Dir
	}
	return "os.UserConfigDir()/inflight/tokens"
}

func (c *cli) authLoginCommand() *cobra.Command {
	var tf target.Flags
	c.targets = append(c.targets, &tf)
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "login [URL] [flags]",
		Short: "Authorize inflight for a server (the browser step) and keep the token",
		Long: `Authorize inflight for a server: discovery, registration, the browser step and the token
exchange, each step printed as it happens; then the token is kept for the next runs.
The authorization URL is printed and opened with $BROWSER (else the system's opener);
--no-browser only prints it. The browser comes back to a loopback callback
(` + oauth.DefaultCallbackURL + `, --callback-url to change it).`,
		Example: `  inflight auth login https://example.com/mcp
  inflight auth login https://example.com/mcp --client-id ID --client-secret SECRET
  inflight auth login https://example.com/mcp --no-browser`,
		Args:          cobra.MaximumNArgs(1),
		SilenceErrors: true,
		SilenceUsage:  true,
		RunE: func(cmd *cobra.Command, args []string) error {
			bare := ""
			if len(args) == 1 {
				bare = args[0]
			}
			if bare == "" && !cmd.Flags().Changed("url") && !cmd.Flags().Changed("config") {
				return errors.New("give the server: auth login URL (or --config FILE --server NAME)")
			}
			t, err := tf.Resolve(nil, bare)
			if err != nil {
				return err
			}
			if !t.IsHTTP() {
				return errors.New("auth login takes a URL server")
			}
			if t.Auth == nil {
				return errors.New("auth login with -H 'Authorization: …' or --no-auth: there is nothing to log in to")
			}
			if t.Auth.ClientCredentials {
				return errors.New("--client-credentials needs no login: call and check ask for a token on each run")
			}
			if t.Auth.Store == nil {
				return errors.New("no user config directory to keep the token in")
			}
			out := &lockedWriter{w: c.stderr}
			t.Auth.Interactive, t.Auth.Prompt = true, out
			if timeout > 0 {
				t.Auth.BrowserTimeout = timeout
			}
			c.code = c.login(cmd.Context(), t, out)
			return nil
		},
	}
	tf.Add(cmd.Flags())
	cmd.Flags().DurationVar(&timeout, "browser-timeout", oauth.DefaultBrowserTimeout, "how long to wait for the browser step's callback")
	return cmd
}

// login connects to the server, which runs the authorization when the
// server asks for one, and says what it did.
func (c *cli) login(ctx context.Context, t target.Target, stderr io.Writer) int {
	red := t.Redactor()
	cfg, err := t.ClientConfig(ctx)
	if err != nil {
		fmt.Fprintf(c.stderr, "inflight auth login: %s\n", termsafe.Line(red.Error(err)))
		return exitcode.Usage
	}
	cl, err := client.New(cfg)
	if err != nil {
		fmt.Fprintf(c.stderr, "inflight auth login: %s\n", termsafe.Line(red.Error(err)))
		return exitcode.Usage
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	authorized := false
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ev := range cl.Events() {
			if ev.Kind != event.Auth {
				continue
			}
			s := ev.AuthStep
			if s.Kind == event.AuthToken && s.Err == "" {
				mu.Lock()
				authorized = true
				mu.Unlock()
			}
			if s.Kind == event.AuthBrowser && s.Err == "" && s.Text != "callback received" {
				continue // the prompt said it, with the URL
			}
			fmt.Fprintf(stderr, "  %s\n", termsafe.Line(red.String(client.AuthText(*s))))
		}
	}()
	_, err = cl.Connect(ctx)
	cl.Close()
	wg.Wait()
	if err != nil {
		fmt.Fprintf(c.stderr, "inflight auth login: %s\n", termsafe.Line(red.Error(err)))
		return exitcode.Usage
	}
	e, _ := t.Auth.Store.Load(t.URL)
	mu.Lock()
	did := authorized
	mu.Unlock()
	switch {
	case e == nil && !did:
		fmt.Fprintf(c.stdout, "%s asked for no authorization: connected without a token\n", termsafe.Line(red.String(t.URL)))
	case e == nil:
		fmt.Fprintf(c.stdout, "authorized for %s, but the token could not be kept\n", termsafe.Line(red.String(t.URL)))
	case !did:
		fmt.Fprintf(c.stdout, "already logged in: %s\n(the token kept works; `inflight auth logout %s` to log in afresh)\n",
			describeEntry(e, red, time.Now()), termsafe.Line(red.String(oauth.ServerKey(t.URL))))
	default:
		fmt.Fprintf(c.stdout, "logged in: %s\ntoken kept in %s\n", describeEntry(e, red, time.Now()), termsafe.Line(t.Auth.Store.Dir))
	}
	return exitcode.Completed
}

// describeEntry is a kept token in one line, without the token.
func describeEntry(e *oauth.Entry, red *redact.Redactor, now time.Time) string {
	var b strings.Builder
	b.WriteString(e.Server)
	fmt.Fprintf(&b, " — issuer %s, client %s", e.Issuer, e.ClientID)
	if e.Registered {
		b.WriteString(" (registered by inflight)")
	}
	if len(e.Scopes) > 0 {
		b.WriteString(", scopes " + strings.Join(e.Scopes, " "))
	}
	switch exp := e.Token.Expiry; {
	case exp.IsZero():
		b.WriteString(", no expiry given")
	case exp.After(now):
		fmt.Fprintf(&b, ", expires in %v", exp.Sub(now).Round(time.Second))
	default:
		fmt.Fprintf(&b, ", expired %v ago", now.Sub(exp).Round(time.Second))
	}
	if e.Token.RefreshToken != "" {
		b.WriteString(", refreshable")
	}
	return termsafe.Line(red.String(b.String()))
}

func (c *cli) authStatusCommand() *cobra.Command {
	return &cobra.Command{
		Use:           "status [URL]",
		Short:         "Show the tokens kept (never the tokens themselves)",
		Args:          cobra.MaximumNArgs(1),
		SilenceErrors: true,
		SilenceUsage:  true,
		RunE: func(cmd *cobra.Command, args []string) error {
			store, err := oauth.DefaultStore()
			if err != nil {
				return err
			}
			server := ""
			if len(args) == 1 {
				server = args[0]
			}
			entries, err := store.List(server)
			if err != nil {
				return err
			}
			red := redact.New(nil, nil, server)
			if len(entries) == 0 {
				if server != "" {
					fmt.Fprintf(c.stdout, "no token kept for %s\n", termsafe.Line(red.String(oauth.ServerKey(server))))
				} else {
					fmt.Fprintf(c.stdout, "no token kept (in %s)\n", termsafe.Line(store.Dir))
				}
				return nil
			}
			now := time.Now()
			for _, e := range entries {
				fmt.Fprintf(c.stdout, "%s\n", describeEntry(e, red, now))
			}
			return nil
		},
	}
}

func (c *cli) authLogoutCommand() *cobra.Command {
	var all bool
	cmd := &cobra.Command{
		Use:           "logout URL | --all",
		Short:         "Forget the tokens kept for a server (or all of them)",
		Args:          cobra.MaximumNArgs(1),
		SilenceErrors: true,
		SilenceUsage:  true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if all == (len(args) == 1) {
				return errors.New("give a server URL, or --all")
			}
			store, err := oauth.DefaultStore()
			if err != nil {
				return err
			}
			if all {
				entries, err := store.List("")
				if err != nil {
					return err
				}
				n := 0
				seen := map[string]bool{}
				for _, e := range entries {
					if !seen[e.Server] {
						seen[e.Server] = true
						k, err := store.Delete(e.Server)
						n += k
						if err != nil {
							return err
						}
					}
				}
				fmt.Fprintf(c.stdout, "forgot %d token(s)\n", n)
				return nil
			}
			n, err := store.Delete(args[0])
			if err != nil {
				return err
			}
			fmt.Fprintf(c.stdout, "forgot %d token(s) for %s\n", n, termsafe.Line(redact.New(nil, nil, args[0]).String(oauth.ServerKey(args[0]))))
			return nil
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "forget every token kept")
	return cmd
}

// lockedWriter lets the browser step's prompt and the steps printed as
// they come share stderr.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
