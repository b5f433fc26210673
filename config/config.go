// Package config is the instance configuration: defaults, then environment
// variables, then command-line flags, each overriding the one before.
package config

import (
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Config is everything an instance needs to start.
type Config struct {
	Addr         string // listen address
	DataDir      string // SQLite apps and uploaded files
	PluginDir    string // plugin binaries
	DatabaseURL  string // selects PostgreSQL when set
	PGNamespace  string // registry schema and app-schema prefix on PostgreSQL
	AllowNewApp  bool   // SERVICE_ALLOW_NEW_APP=1 permits POST /api/new-app
	Demo         bool   // create and fill a demo app when no app exists
	PublicURL    string // external base URL, used for links and trusted redirects
	MaxBodyBytes int64  // cap of a request body (JSON routes)
	// MaxBatchRequests caps the requests of one POST /<app>/api/batch.
	MaxBatchRequests int
	PasswordCost     int    // bcrypt cost
	LogLevel         string // debug, info, warn, error
	LogFormat        string // text or json
	// ShutdownTimeout bounds the wait for in-flight requests on SIGTERM.
	ShutdownTimeout time.Duration
}

// Defaults used when neither env nor flags say otherwise.
const (
	DefaultAddr         = "127.0.0.1:8080"
	DefaultDataDir      = "./data"
	DefaultPluginDir    = "./bin/plugins"
	DefaultMaxBodyBytes = 8 << 20
	// DefaultMaxBatchRequests is the default cap of a batch's requests.
	DefaultMaxBatchRequests = 1000
	DefaultPasswordCost     = 12
)

// Default returns the built-in configuration.
func Default() Config {
	return Config{
		Addr:             DefaultAddr,
		DataDir:          DefaultDataDir,
		PluginDir:        DefaultPluginDir,
		MaxBodyBytes:     DefaultMaxBodyBytes,
		MaxBatchRequests: DefaultMaxBatchRequests,
		PasswordCost:     DefaultPasswordCost,
		LogLevel:         "info",
		LogFormat:        "text",
		ShutdownTimeout:  15 * time.Second,
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
	if v := getenv("STRATA_MAX_BATCH_REQUESTS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			errList = append(errList, fmt.Errorf("STRATA_MAX_BATCH_REQUESTS: %q is not a positive integer", v))
		}
		c.MaxBatchRequests = n
	}
	if v := getenv("STRATA_BCRYPT_COST"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			errList = append(errList, fmt.Errorf("STRATA_BCRYPT_COST: %q is not an integer", v))
		}
		c.PasswordCost = n
	}
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
	fs.BoolVar(&c.Demo, "demo", c.Demo, "when no application exists, create a demo application with generated data (env STRATA_DEMO=1)")
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
	if c.MaxBatchRequests <= 0 {
		errList = append(errList, errors.New("max batch requests must be positive"))
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
	return errors.Join(errList...)
}
