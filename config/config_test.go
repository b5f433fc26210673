package config

import (
	"flag"
	"strings"
	"testing"
	"time"
)

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestPrecedenceDefaultsEnvFlags(t *testing.T) {
	c, err := FromEnv(envOf(map[string]string{
		"STRATA_ADDR": "0.0.0.0:9000", "STRATA_DATA_DIR": "/srv/strata", "SERVICE_ALLOW_NEW_APP": "1",
		"DATABASE_URL": "postgres://x", "STRATA_BCRYPT_COST": "10",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr != "0.0.0.0:9000" || c.DataDir != "/srv/strata" || !c.AllowNewApp || c.DatabaseURL != "postgres://x" || c.PasswordCost != 10 {
		t.Fatalf("env not applied: %+v", c)
	}
	if c.PluginDir != DefaultPluginDir {
		t.Fatalf("default lost: %q", c.PluginDir)
	}
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	c.RegisterFlags(fs)
	if err := fs.Parse([]string{"--addr", "127.0.0.1:1", "--plugin-dir", "/p"}); err != nil {
		t.Fatal(err)
	}
	if c.Addr != "127.0.0.1:1" || c.PluginDir != "/p" || c.DataDir != "/srv/strata" {
		t.Fatalf("flags did not override env: %+v", c)
	}
}

func TestAllowNewAppNeedsExactlyOne(t *testing.T) {
	for _, v := range []string{"", "0", "true", "yes"} {
		c, _ := FromEnv(envOf(map[string]string{"SERVICE_ALLOW_NEW_APP": v}))
		if c.AllowNewApp {
			t.Errorf("SERVICE_ALLOW_NEW_APP=%q enabled app creation", v)
		}
	}
}

func TestInvalidSettingsAreAllReported(t *testing.T) {
	_, err := FromEnv(envOf(map[string]string{"STRATA_MAX_BODY_BYTES": "lots", "STRATA_BCRYPT_COST": "x"}))
	if err == nil || !strings.Contains(err.Error(), "STRATA_MAX_BODY_BYTES") || !strings.Contains(err.Error(), "STRATA_BCRYPT_COST") {
		t.Fatalf("want both env errors, got %v", err)
	}
	c := Default()
	c.Addr, c.PasswordCost, c.LogLevel, c.PublicURL = "", 2, "loud", "ftp://x"
	err = c.Validate()
	for _, want := range []string{"addr", "bcrypt cost", "log level", "SERVICE_PUBLIC_URL"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate error %v lacks %q", err, want)
		}
	}
	if err := Default().Validate(); err != nil {
		t.Errorf("defaults invalid: %v", err)
	}
}

func TestRateLimitSettings(t *testing.T) {
	if d := Default().RateLimits; d != (RateLimits{RegisterPerAddr: 10, OAuthStartPerAddr: 20, SignInPerAddr: 20, SignInPerAccount: 10, ResetPerAddr: 5, ResetMailsPerHour: 3, APIKeyFailsPerAddr: 30}) {
		t.Fatalf("defaults of CONTRACT §10: %+v", d)
	}
	c, err := FromEnv(envOf(map[string]string{"STRATA_RATE_SIGNIN_PER_ADDR": "50", "STRATA_RATE_RESET_MAILS_PER_HOUR": "0",
		"STRATA_TRUSTED_PROXIES": "10.0.0.0/8, 127.0.0.1"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.RateLimits.SignInPerAddr != 50 || c.RateLimits.ResetMailsPerHour != 0 || c.RateLimits.SignInPerAccount != 10 ||
		strings.Join(c.TrustedProxies, "|") != "10.0.0.0/8|127.0.0.1" {
		t.Fatalf("env not applied: %+v %v", c.RateLimits, c.TrustedProxies)
	}
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	c.RegisterFlags(fs)
	if err := fs.Parse([]string{"--rate-apikey-fails-per-addr", "7", "--trusted-proxies", "192.0.2.1"}); err != nil {
		t.Fatal(err)
	}
	if c.RateLimits.APIKeyFailsPerAddr != 7 || c.RateLimits.SignInPerAddr != 50 || strings.Join(c.TrustedProxies, "|") != "192.0.2.1" {
		t.Fatalf("flags: %+v %v", c.RateLimits, c.TrustedProxies)
	}
	if _, err := FromEnv(envOf(map[string]string{"STRATA_RATE_RESET_PER_ADDR": "-1"})); err == nil {
		t.Error("a negative limit is refused")
	}
	c.TrustedProxies = []string{"proxy.example"}
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "trusted proxy") {
		t.Errorf("a host name as trusted proxy: %v", err)
	}
}

func TestMaxBatchRequests(t *testing.T) {
	if c, _ := FromEnv(envOf(nil)); c.MaxBatchRequests != DefaultMaxBatchRequests {
		t.Fatalf("default: %d", c.MaxBatchRequests)
	}
	if c, err := FromEnv(envOf(map[string]string{"STRATA_MAX_BATCH_REQUESTS": "50"})); err != nil || c.MaxBatchRequests != 50 {
		t.Fatalf("env: %d %v", c.MaxBatchRequests, err)
	}
	for _, v := range []string{"0", "-1", "many"} {
		if _, err := FromEnv(envOf(map[string]string{"STRATA_MAX_BATCH_REQUESTS": v})); err == nil || !strings.Contains(err.Error(), "STRATA_MAX_BATCH_REQUESTS") {
			t.Errorf("%q accepted: %v", v, err)
		}
	}
}

func TestPGMaxConns(t *testing.T) {
	if c, _ := FromEnv(envOf(nil)); c.PGMaxConns != DefaultPGMaxConns {
		t.Fatalf("default: %d", c.PGMaxConns)
	}
	if c, err := FromEnv(envOf(map[string]string{"STRATA_PG_MAX_CONNS": " 8 "})); err != nil || c.PGMaxConns != 8 {
		t.Fatalf("env: %d %v", c.PGMaxConns, err)
	}
	for _, v := range []string{"0", "-3", "eight", "8.5"} {
		if _, err := FromEnv(envOf(map[string]string{"STRATA_PG_MAX_CONNS": v})); err == nil || !strings.Contains(err.Error(), "STRATA_PG_MAX_CONNS") {
			t.Errorf("%q accepted: %v", v, err)
		}
	}
}

func TestS3Settings(t *testing.T) {
	c, err := FromEnv(envOf(map[string]string{}))
	if err != nil || c.S3 != (S3{}) {
		t.Fatalf("no S3 by default: %+v %v", c.S3, err)
	}
	c, err = FromEnv(envOf(map[string]string{
		"STRATA_S3_ENDPOINT": "http://127.0.0.1:9000", "STRATA_S3_BUCKET": "strata-files",
		"STRATA_S3_REGION": "eu-central-1", "STRATA_S3_ACCESS_KEY": "ak", "STRATA_S3_SECRET_KEY": "sk",
		"STRATA_S3_PREFIX": "node/files/", "STRATA_S3_PATH_STYLE": "1",
	}))
	want := S3{Endpoint: "http://127.0.0.1:9000", Bucket: "strata-files", Region: "eu-central-1",
		AccessKey: "ak", SecretKey: "sk", Prefix: "node/files/", PathStyle: true}
	if err != nil || c.S3 != want {
		t.Fatalf("got %+v %v", c.S3, err)
	}
	bad := []map[string]string{
		{"STRATA_S3_ENDPOINT": "http://x"}, // no bucket
		{"STRATA_S3_BUCKET": "Bad_Bucket"},
		{"STRATA_S3_BUCKET": "b.."},
		{"STRATA_S3_BUCKET": "ok-bucket", "STRATA_S3_ENDPOINT": "s3.example.org"},
		{"STRATA_S3_BUCKET": "ok-bucket", "STRATA_S3_ENDPOINT": "https://s3.example.org/sub"},
		{"STRATA_S3_BUCKET": "ok-bucket", "STRATA_S3_REGION": "eu central"},
		{"STRATA_S3_BUCKET": "ok-bucket", "STRATA_S3_ACCESS_KEY": "only"},
		{"STRATA_S3_BUCKET": "ok-bucket", "STRATA_S3_PREFIX": "/abs/"},
		{"STRATA_S3_BUCKET": "ok-bucket", "STRATA_S3_PREFIX": "a/../b/"},
		{"STRATA_S3_BUCKET": "ok-bucket", "STRATA_S3_PATH_STYLE": "yes please"},
	}
	for _, env := range bad {
		if _, err := FromEnv(envOf(env)); err == nil {
			t.Errorf("%v accepted", env)
		}
	}
}

func TestPluginPingSettings(t *testing.T) {
	if c, _ := FromEnv(envOf(nil)); c.PluginPingInterval != 5*time.Second || c.PluginPingTimeout != 20*time.Second {
		t.Fatalf("defaults: %s %s", c.PluginPingInterval, c.PluginPingTimeout)
	}
	for _, tc := range []struct {
		env               map[string]string
		interval, timeout time.Duration
		bad               string // the variable named in the error, if refused
	}{
		{map[string]string{"STRATA_PLUGIN_PING_INTERVAL": "1s", "STRATA_PLUGIN_PING_TIMEOUT": " 3s "}, time.Second, 3 * time.Second, ""},
		{map[string]string{"STRATA_PLUGIN_PING_TIMEOUT": "0"}, 5 * time.Second, 0, ""},
		{map[string]string{"STRATA_PLUGIN_PING_INTERVAL": "0"}, 0, 0, "STRATA_PLUGIN_PING_INTERVAL"},
		{map[string]string{"STRATA_PLUGIN_PING_INTERVAL": "often"}, 0, 0, "STRATA_PLUGIN_PING_INTERVAL"},
		{map[string]string{"STRATA_PLUGIN_PING_TIMEOUT": "-1s"}, 0, 0, "STRATA_PLUGIN_PING_TIMEOUT"},
		{map[string]string{"STRATA_PLUGIN_PING_TIMEOUT": "20"}, 0, 0, "STRATA_PLUGIN_PING_TIMEOUT"},
	} {
		c, err := FromEnv(envOf(tc.env))
		if tc.bad != "" {
			if err == nil || !strings.Contains(err.Error(), tc.bad) {
				t.Errorf("%v accepted: %v", tc.env, err)
			}
			continue
		}
		if err != nil || c.PluginPingInterval != tc.interval || c.PluginPingTimeout != tc.timeout {
			t.Errorf("%v: %s %s %v", tc.env, c.PluginPingInterval, c.PluginPingTimeout, err)
		}
	}
}
