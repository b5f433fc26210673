// Package config is the instance configuration: defaults, then environment
// variables, then command-line flags, each overriding the one before.
package config

import (
	"errors"
	"flag"
	"fmt"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// Config is everything an instance needs to start.
type Config struct {
	Addr        string // listen address
	DataDir     string // SQLite apps and uploaded files
	PluginDir   string // plugin binaries
	DatabaseURL string // selects PostgreSQL when set
	PGNamespace string // registry schema and app-schema prefix on PostgreSQL
	// PGMaxConns caps the node's pool of connections to PostgreSQL for
	// the apps (STRATA_PG_MAX_CONNS; the job system has its own).
	PGMaxConns   int
	AllowNewApp  bool   // SERVICE_ALLOW_NEW_APP=1 permits POST /api/new-app
	Demo         bool   // create and fill a demo app when no app exists
	PublicURL    string // external base URL, used for links and trusted redirects
	MaxBodyBytes int64  // cap of a request body (JSON routes)
	// MaxUploadBytes caps one uploaded file (SPEC §8: 64 MiB);
	// STRATA_MAX_UPLOAD_BYTES. Upload routes allow a body this large plus
	// the multipart framing.
	MaxUploadBytes int64
	// MetricsAddr serves the Prometheus metrics on their own listener
	// (STRATA_METRICS_ADDR, e.g. 127.0.0.1:9090; "" : none).
	MetricsAddr string
	// MetricsToken serves them on the main port too, at /metrics, to the
	// bearer of this token (STRATA_METRICS_TOKEN; "" : not there).
	MetricsToken string
	// MaxBackupUploadBytes caps an archive sent to POST /backups/upload
	// (default 4 GiB); STRATA_MAX_BACKUP_UPLOAD_BYTES.
	MaxBackupUploadBytes int64
	// MaxBatchRequests caps the requests of one POST /<app>/api/batch.
	MaxBatchRequests int
	PasswordCost     int    // bcrypt cost
	LogLevel         string // debug, info, warn, error
	LogFormat        string // text or json
	// ShutdownTimeout bounds the wait for in-flight requests on SIGTERM.
	ShutdownTimeout time.Duration
	// BodyTimeout bounds the reading of an ordinary request's body, so a
	// client sending it a byte at a time cannot hold a connection open
	// (uploads set their own, longer deadline). STRATA_BODY_TIMEOUT.
	BodyTimeout time.Duration
	// WriteTimeout bounds the time an ordinary request may take to be
	// answered once its body is in (STRATA_WRITE_TIMEOUT; 0: none), so a
	// client that stops reading cannot hold a connection. Downloads,
	// exports and event streams have none.
	WriteTimeout time.Duration
	// AppMaxConcurrent caps the requests one app may have in progress
	// (STRATA_APP_MAX_CONCURRENT; 0: no cap), so one busy app cannot
	// starve the others; AppQueueTimeout is how long a request over the
	// cap waits for a slot before 503 app_busy (STRATA_APP_QUEUE_TIMEOUT).
	AppMaxConcurrent int
	AppQueueTimeout  time.Duration
	// ChangeLogMaxAge and ChangeLogMaxEvents bound each app's change log
	// (STRATA_CHANGELOG_MAX_AGE, default 720h (30 days);
	// STRATA_CHANGELOG_MAX_EVENTS, default 1000000): an offline device's
	// sync pull resumes within them, else starts again (reset); live
	// streams replay at most 15 minutes or 50,000 events of it.
	ChangeLogMaxAge    time.Duration
	ChangeLogMaxEvents int64
	// RealtimePerApp and RealtimePerUser cap the open live streams of an
	// app and of one of its users (STRATA_REALTIME_PER_APP, default 1000;
	// STRATA_REALTIME_PER_USER, default 20); RealtimeBuffer is how many
	// events may wait for a slow client before it is dropped with resync
	// (STRATA_REALTIME_BUFFER, default 256). 0: the default.
	RealtimePerApp  int
	RealtimePerUser int
	RealtimeBuffer  int
	// SyncHold is how long a device's pushed mutation waits for its
	// predecessor (seq - 1) before it is applied anyway and marked as a
	// conflict (STRATA_SYNC_HOLD, default 10m; 0: the default).
	SyncHold time.Duration
	// RateLimits slow repeated sign-in, reset and API-key attempts.
	RateLimits RateLimits
	// PluginPingInterval is how often each plugin process's health is
	// checked (STRATA_PLUGIN_PING_INTERVAL); one that has answered no
	// check for PluginPingTimeout (STRATA_PLUGIN_PING_TIMEOUT; 0: no
	// check) is killed and restarted like a crashed one.
	PluginPingInterval time.Duration
	PluginPingTimeout  time.Duration
	// TrustedProxies lists the reverse proxies (IP addresses or CIDR
	// prefixes) whose X-Forwarded-For names the client address.
	TrustedProxies []string
	// S3 selects S3-compatible object storage for uploaded files when its
	// Bucket is set (default: the local disk under DataDir).
	S3 S3
}

// S3 is the S3-compatible file store (STRATA_S3_*).
type S3 struct {
	Endpoint  string // base URL, http:// or https:// (empty: AWS)
	Bucket    string // selects the S3 store when set
	Region    string
	AccessKey string // with SecretKey; both empty: AWS_*/MINIO_* or an instance role
	SecretKey string
	Prefix    string // put before <app>/<key> as is, e.g. "strata/"
	PathStyle bool   // bucket in the path rather than the host name
}

// S3Env names the S3 settings' variables, in order.
var S3Env = []string{"STRATA_S3_ENDPOINT", "STRATA_S3_BUCKET", "STRATA_S3_REGION", "STRATA_S3_ACCESS_KEY", "STRATA_S3_SECRET_KEY", "STRATA_S3_PREFIX", "STRATA_S3_PATH_STYLE"}

var (
	bucketPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$`)
	regionPattern = regexp.MustCompile(`^[a-zA-Z0-9-]{1,64}$`)
)

// s3FromEnv reads and checks the STRATA_S3_* variables.
func s3FromEnv(getenv func(string) string) (S3, []error) {
	var c S3
	var errs []error
	get := func(k string) string { return strings.TrimSpace(getenv(k)) }
	c.Endpoint = get("STRATA_S3_ENDPOINT")
	c.Bucket = get("STRATA_S3_BUCKET")
	c.Region = get("STRATA_S3_REGION")
	c.AccessKey = get("STRATA_S3_ACCESS_KEY")
	c.SecretKey = get("STRATA_S3_SECRET_KEY")
	c.Prefix = get("STRATA_S3_PREFIX")
	if v := get("STRATA_S3_PATH_STYLE"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("STRATA_S3_PATH_STYLE: %q is not 1, 0, true or false", v))
		}
		c.PathStyle = b
	}
	if c.Bucket == "" {
		for _, k := range S3Env {
			if get(k) != "" {
				errs = append(errs, fmt.Errorf("%s is set but STRATA_S3_BUCKET is not: set the bucket to store files in S3, or unset the STRATA_S3_ variables", k))
				break
			}
		}
		return c, errs
	}
	if !bucketPattern.MatchString(c.Bucket) || strings.Contains(c.Bucket, "..") {
		errs = append(errs, fmt.Errorf("STRATA_S3_BUCKET: %q is not a bucket name (3-63 lower-case letters, digits, dots, hyphens)", c.Bucket))
	}
	if c.Endpoint != "" {
		u, err := url.Parse(c.Endpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.User != nil {
			errs = append(errs, fmt.Errorf("STRATA_S3_ENDPOINT: %q is not a base URL such as https://s3.example.org or http://127.0.0.1:9000", c.Endpoint))
		}
	}
	if c.Region != "" && !regionPattern.MatchString(c.Region) {
		errs = append(errs, fmt.Errorf("STRATA_S3_REGION: %q is not a region name (e.g. eu-central-1)", c.Region))
	}
	if (c.AccessKey == "") != (c.SecretKey == "") {
		errs = append(errs, errors.New("STRATA_S3_ACCESS_KEY and STRATA_S3_SECRET_KEY go together: set both, or neither to use AWS_*/MINIO_* variables or an instance role"))
	}
	if p := c.Prefix; p != "" {
		if len(p) > 512 || strings.HasPrefix(p, "/") || strings.Contains(p, "//") || slices.Contains(strings.Split(p, "/"), "..") || slices.Contains(strings.Split(p, "/"), ".") || strings.ContainsFunc(p, unicode.IsControl) {
			errs = append(errs, fmt.Errorf("STRATA_S3_PREFIX: %q is not a usable object-name prefix (no leading /, no // or . or .. segments, no control characters, at most 512 bytes)", p))
		}
	}
	return c, errs
}

// RateLimits are the limits of CONTRACT §10 (0 disables one), shared by
// the nodes of a PostgreSQL instance.
type RateLimits struct {
	RegisterPerAddr    int // self-registrations a minute per client address
	OAuthStartPerAddr  int // OAuth sign-ins started a minute per client address
	SignInPerAddr      int // sign-in attempts a minute per client address
	SignInPerAccount   int // sign-in attempts a minute per account (email)
	ResetPerAddr       int // reset requests a minute per client address
	ResetMailsPerHour  int // reset mails an hour per address mailed
	APIKeyFailsPerAddr int // failed API-key authentications a minute per client address
}

// DefaultRateLimits are the limits of CONTRACT §10.
var DefaultRateLimits = RateLimits{RegisterPerAddr: 10, OAuthStartPerAddr: 20, SignInPerAddr: 20, SignInPerAccount: 10, ResetPerAddr: 5, ResetMailsPerHour: 3, APIKeyFailsPerAddr: 30}

// rateSettings names each limit for env and flags.
func (r *RateLimits) settings() []struct {
	env, flag, usage string
	dst              *int
} {
	return []struct {
		env, flag, usage string
		dst              *int
	}{
		{"STRATA_RATE_SIGNIN_PER_ADDR", "rate-signin-per-addr", "sign-in attempts a minute per client address", &r.SignInPerAddr},
		{"STRATA_RATE_SIGNIN_PER_ACCOUNT", "rate-signin-per-account", "sign-in attempts a minute per account", &r.SignInPerAccount},
		{"STRATA_RATE_RESET_PER_ADDR", "rate-reset-per-addr", "password-reset requests a minute per client address", &r.ResetPerAddr},
		{"STRATA_RATE_RESET_MAILS_PER_HOUR", "rate-reset-mails-per-hour", "password-reset mails an hour per address mailed", &r.ResetMailsPerHour},
		{"STRATA_RATE_APIKEY_FAILS_PER_ADDR", "rate-apikey-fails-per-addr", "failed API-key authentications a minute per client address", &r.APIKeyFailsPerAddr},
		{"STRATA_RATE_REGISTER_PER_ADDR", "rate-register-per-addr", "self-registrations (password or OAuth) a minute per client address", &r.RegisterPerAddr},
		{"STRATA_RATE_OAUTH_START_PER_ADDR", "rate-oauth-start-per-addr", "OAuth sign-ins started a minute per client address", &r.OAuthStartPerAddr},
	}
}

// RateEnv lists the rate-limit environment variables with their flag, the
// default and the meaning (for the help text).
func RateEnv() [][4]string {
	d := DefaultRateLimits
	var out [][4]string
	for _, s := range d.settings() {
		out = append(out, [4]string{s.env, s.flag, strconv.Itoa(*s.dst), s.usage})
	}
	return out
}

// Defaults used when neither env nor flags say otherwise.
const (
	DefaultAddr         = "127.0.0.1:8080"
	DefaultDataDir      = "./data"
	DefaultPluginDir    = "./bin/plugins"
	DefaultMaxBodyBytes = 8 << 20
	// DefaultMaxUploadBytes is the shipped deployment's upload limit.
	DefaultMaxUploadBytes = 64 << 20
	// DefaultMaxBatchRequests is the default cap of a batch's requests.
	DefaultMaxBatchRequests = 1000
	DefaultPasswordCost     = 12
	// DefaultPGMaxConns: see docs/performance.md ("The pool's size").
	DefaultPGMaxConns = 20
	// DefaultAppMaxConcurrent: far above what one app's users make on
	// their own (the 16-client benchmark stays under it), low enough that
	// one app flooding the instance leaves workers to the others.
	DefaultAppMaxConcurrent = 64
)

// Default returns the built-in configuration.
func Default() Config {
	return Config{
		Addr:                 DefaultAddr,
		DataDir:              DefaultDataDir,
		PluginDir:            DefaultPluginDir,
		MaxBodyBytes:         DefaultMaxBodyBytes,
		MaxUploadBytes:       DefaultMaxUploadBytes,
		MaxBackupUploadBytes: 4 << 30,
		MaxBatchRequests:     DefaultMaxBatchRequests,
		PGMaxConns:           DefaultPGMaxConns,
		PasswordCost:         DefaultPasswordCost,
		LogLevel:             "info",
		LogFormat:            "text",
		ShutdownTimeout:      15 * time.Second,
		BodyTimeout:          30 * time.Second,
		WriteTimeout:         2 * time.Minute,
		AppMaxConcurrent:     DefaultAppMaxConcurrent,
		AppQueueTimeout:      5 * time.Second,
		RateLimits:           DefaultRateLimits,
		PluginPingInterval:   5 * time.Second,
		PluginPingTimeout:    20 * time.Second,
	}
}

// FromEnv applies environment variables (read through getenv) to the
// defaults.
func FromEnv(getenv func(string) string) (Config, error) {
	c := Default()
	str := func(key string, dst *string) {
		if v := strings.TrimSpace(getenv(key)); v != "" {
			*dst = v
		}
	}
	str("STRATA_ADDR", &c.Addr)
	str("STRATA_DATA_DIR", &c.DataDir)
	str("STRATA_PLUGIN_DIR", &c.PluginDir)
	str("DATABASE_URL", &c.DatabaseURL)
	str("STRATA_PG_NAMESPACE", &c.PGNamespace)
	str("SERVICE_PUBLIC_URL", &c.PublicURL)
	str("STRATA_METRICS_ADDR", &c.MetricsAddr)
	str("STRATA_METRICS_TOKEN", &c.MetricsToken)
	str("STRATA_LOG_LEVEL", &c.LogLevel)
	str("STRATA_LOG_FORMAT", &c.LogFormat)
	c.AllowNewApp = getenv("SERVICE_ALLOW_NEW_APP") == "1"
	c.Demo = getenv("STRATA_DEMO") == "1"
	var errList []error
	if v := getenv("STRATA_MAX_BODY_BYTES"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			errList = append(errList, fmt.Errorf("STRATA_MAX_BODY_BYTES: %q is not a positive integer", v))
		}
		c.MaxBodyBytes = n
	}
	if v := getenv("STRATA_MAX_BACKUP_UPLOAD_BYTES"); v != "" {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil || n <= 0 {
			errList = append(errList, fmt.Errorf("STRATA_MAX_BACKUP_UPLOAD_BYTES: %q is not a positive integer", v))
		} else {
			c.MaxBackupUploadBytes = n
		}
	}
	if v := getenv("STRATA_MAX_UPLOAD_BYTES"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			errList = append(errList, fmt.Errorf("STRATA_MAX_UPLOAD_BYTES: %q is not a positive integer", v))
		}
		c.MaxUploadBytes = n
	}
	if v := getenv("STRATA_BODY_TIMEOUT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			errList = append(errList, fmt.Errorf("STRATA_BODY_TIMEOUT: %q is not a positive duration (e.g. 30s)", v))
		}
		c.BodyTimeout = d
	}
	if v := strings.TrimSpace(getenv("STRATA_WRITE_TIMEOUT")); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			errList = append(errList, fmt.Errorf("STRATA_WRITE_TIMEOUT: %q is not a duration (e.g. 2m; 0 for none)", v))
		}
		c.WriteTimeout = d
	}
	if v := strings.TrimSpace(getenv("STRATA_APP_MAX_CONCURRENT")); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			errList = append(errList, fmt.Errorf("STRATA_APP_MAX_CONCURRENT: %q is not a whole number (0 removes the cap)", v))
		}
		c.AppMaxConcurrent = n
	}
	for _, iv := range []struct {
		env string
		to  *int
	}{{"STRATA_REALTIME_PER_APP", &c.RealtimePerApp}, {"STRATA_REALTIME_PER_USER", &c.RealtimePerUser}, {"STRATA_REALTIME_BUFFER", &c.RealtimeBuffer}} {
		if v := strings.TrimSpace(getenv(iv.env)); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				errList = append(errList, fmt.Errorf("%s: %q is not a whole number (0 for the default)", iv.env, v))
			}
			*iv.to = n
		}
	}
	if v := strings.TrimSpace(getenv("STRATA_CHANGELOG_MAX_EVENTS")); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			errList = append(errList, fmt.Errorf("STRATA_CHANGELOG_MAX_EVENTS: %q is not a whole number (0 for the default)", v))
		}
		c.ChangeLogMaxEvents = n
	}
	if v := strings.TrimSpace(getenv("STRATA_CHANGELOG_MAX_AGE")); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			errList = append(errList, fmt.Errorf("STRATA_CHANGELOG_MAX_AGE: %q is not a duration (e.g. 15m; 0 for the default)", v))
		}
		c.ChangeLogMaxAge = d
	}
	if v := strings.TrimSpace(getenv("STRATA_SYNC_HOLD")); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			errList = append(errList, fmt.Errorf("STRATA_SYNC_HOLD: %q is not a duration (e.g. 10m; 0 for the default)", v))
		}
		c.SyncHold = d
	}
	if v := strings.TrimSpace(getenv("STRATA_APP_QUEUE_TIMEOUT")); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			errList = append(errList, fmt.Errorf("STRATA_APP_QUEUE_TIMEOUT: %q is not a duration (e.g. 5s)", v))
		}
		c.AppQueueTimeout = d
	}
	if v := strings.TrimSpace(getenv("STRATA_PLUGIN_PING_INTERVAL")); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			errList = append(errList, fmt.Errorf("STRATA_PLUGIN_PING_INTERVAL: %q is not a positive duration (e.g. 5s)", v))
		}
		c.PluginPingInterval = d
	}
	if v := strings.TrimSpace(getenv("STRATA_PLUGIN_PING_TIMEOUT")); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			errList = append(errList, fmt.Errorf("STRATA_PLUGIN_PING_TIMEOUT: %q is not a duration (e.g. 20s; 0 turns the check off)", v))
		}
		c.PluginPingTimeout = d
	}
	if v := getenv("STRATA_MAX_BATCH_REQUESTS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			errList = append(errList, fmt.Errorf("STRATA_MAX_BATCH_REQUESTS: %q is not a positive integer", v))
		}
		c.MaxBatchRequests = n
	}
	if v := strings.TrimSpace(getenv("STRATA_PG_MAX_CONNS")); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			errList = append(errList, fmt.Errorf("STRATA_PG_MAX_CONNS: %q is not a positive integer", v))
		}
		c.PGMaxConns = n
	}
	if v := getenv("STRATA_BCRYPT_COST"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			errList = append(errList, fmt.Errorf("STRATA_BCRYPT_COST: %q is not an integer", v))
		}
		c.PasswordCost = n
	}
	for _, r := range c.RateLimits.settings() {
		if v := strings.TrimSpace(getenv(r.env)); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				errList = append(errList, fmt.Errorf("%s: %q is not a whole number (0 disables the limit)", r.env, v))
				continue
			}
			*r.dst = n
		}
	}
	if v := strings.TrimSpace(getenv("STRATA_TRUSTED_PROXIES")); v != "" {
		c.TrustedProxies = splitList(v)
	}
	var s3Errs []error
	c.S3, s3Errs = s3FromEnv(getenv)
	errList = append(errList, s3Errs...)
	if err := errors.Join(errList...); err != nil {
		return c, err
	}
	return c, nil
}

// RegisterFlags binds the serve flags to c; their defaults are c's current
// values, so flags override the environment.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.Addr, "addr", c.Addr, "listen address (env STRATA_ADDR)")
	fs.StringVar(&c.DataDir, "data-dir", c.DataDir, "data folder: SQLite apps and files (env STRATA_DATA_DIR)")
	fs.StringVar(&c.PluginDir, "plugin-dir", c.PluginDir, "plugin binaries folder (env STRATA_PLUGIN_DIR)")
	fs.BoolVar(&c.Demo, "demo", c.Demo, "when no application exists, create a demo application with generated data; print its sign-in at every start (env STRATA_DEMO=1)")
	for _, r := range c.RateLimits.settings() {
		fs.IntVar(r.dst, r.flag, *r.dst, r.usage+", 0: no limit (env "+r.env+")")
	}
	fs.Func("trusted-proxies", "comma-separated IP addresses or CIDR prefixes of reverse proxies whose X-Forwarded-For names the client address (env STRATA_TRUSTED_PROXIES; default none)",
		func(v string) error { c.TrustedProxies = splitList(v); return nil })
}

// splitList reads a list separated by commas or spaces.
func splitList(v string) []string {
	return strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' })
}

// RegisterStorageFlags binds only the storage flags (for admin commands).
func (c *Config) RegisterStorageFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.DataDir, "data-dir", c.DataDir, "data folder: SQLite apps and files (env STRATA_DATA_DIR)")
}

// Validate reports every invalid setting at once.
func (c Config) Validate() error {
	var errList []error
	if c.Addr == "" {
		errList = append(errList, errors.New("addr must not be empty"))
	}
	if c.DatabaseURL == "" && c.DataDir == "" {
		errList = append(errList, errors.New("data-dir must not be empty when DATABASE_URL is not set"))
	}
	if c.MaxBodyBytes <= 0 {
		errList = append(errList, errors.New("max body bytes must be positive"))
	}
	if c.MaxUploadBytes <= 0 {
		errList = append(errList, errors.New("max upload bytes must be positive"))
	}
	if c.MaxBatchRequests <= 0 {
		errList = append(errList, errors.New("max batch requests must be positive"))
	}
	if c.PGMaxConns <= 0 {
		errList = append(errList, errors.New("PostgreSQL pool size must be positive"))
	}
	if c.PasswordCost < 4 || c.PasswordCost > 31 {
		errList = append(errList, fmt.Errorf("bcrypt cost %d outside 4..31", c.PasswordCost))
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		errList = append(errList, fmt.Errorf("log level %q: want debug, info, warn or error", c.LogLevel))
	}
	switch c.LogFormat {
	case "text", "json":
	default:
		errList = append(errList, fmt.Errorf("log format %q: want text or json", c.LogFormat))
	}
	if c.PublicURL != "" && !strings.HasPrefix(c.PublicURL, "http://") && !strings.HasPrefix(c.PublicURL, "https://") {
		errList = append(errList, fmt.Errorf("SERVICE_PUBLIC_URL %q must start with http:// or https://", c.PublicURL))
	}
	for _, r := range c.RateLimits.settings() {
		if *r.dst < 0 {
			errList = append(errList, fmt.Errorf("%s must not be negative", r.flag))
		}
	}
	for _, p := range c.TrustedProxies {
		if _, err := netip.ParsePrefix(p); err != nil {
			if _, err := netip.ParseAddr(p); err != nil {
				errList = append(errList, fmt.Errorf("trusted proxy %q: not an IP address or CIDR prefix", p))
			}
		}
	}
	return errors.Join(errList...)
}
