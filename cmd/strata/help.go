package main

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/strata-archaeo/strata/config"
	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/files/s3store"
	"github.com/strata-archaeo/strata/core/mail"
	"github.com/strata-archaeo/strata/core/oauth"
)

// command describes one command for its help text. The flags are the very
// functions the command binds, so the help cannot forget one.
type command struct {
	name     string   // "serve", "app create"
	args     string   // positional arguments of the synopsis, e.g. "NAME"
	required []string // flags the command refuses to run without
	summary  string   // one line, for the command list
	text     string   // what it does, a paragraph or two
	flags    func(*config.Config, *flag.FlagSet)
	env      []envVar
}

// envVar is an environment variable a command reads.
type envVar struct{ name, def, meaning string }

// The environment variables, by the part of Strata that reads them.
var (
	// Storage and logging: config.FromEnv, for every command that opens
	// the applications.
	envStorage = []envVar{
		{"STRATA_DATA_DIR", config.DefaultDataDir, "data folder: SQLite applications (apps/<name>/app.db), files, plugin sockets (run/)"},
		{"DATABASE_URL", "", "PostgreSQL connection URL; when set, applications live in PostgreSQL instead of SQLite"},
		{"STRATA_PG_NAMESPACE", "strata", "PostgreSQL registry schema and prefix of the application schemas"},
		{"STRATA_PG_MAX_CONNS", fmt.Sprint(config.DefaultPGMaxConns), "most connections of the node's pool to PostgreSQL for the applications (the job system has its own)"},
		{"STRATA_LOG_LEVEL", "info", "debug, info, warn or error"},
		{"STRATA_LOG_FORMAT", "text", "text or json"},
	}
	envSecretKey = envVar{"STRATA_SECRET_KEY", "<data-dir>/secret.key", "instance key(s) encrypting the applications' secrets: base64 of 32 bytes, comma-separated, the first encrypts; without it the key file of the data folder (made at first start, mode 0600)"}
	envBcrypt    = envVar{"STRATA_BCRYPT_COST", fmt.Sprint(config.DefaultPasswordCost), "bcrypt work factor of new passwords (4..31)"}
	envAdminPwd  = envVar{"STRATA_ADMIN_PASSWORD", "", "password of the first super_admin when --password is not given (else the first line of stdin)"}
	// The server's own settings.
	envServer = []envVar{
		{"STRATA_ADDR", config.DefaultAddr, "listen address"},
		{"STRATA_PLUGIN_DIR", config.DefaultPluginDir, "plugin binaries folder"},
		{"STRATA_PLUGIN_PING_INTERVAL", "5s", "how often each plugin process's health is checked"},
		{"STRATA_PLUGIN_PING_TIMEOUT", "20s", "a plugin process answering no health check for this long is killed and restarted like a crashed one (0: no check)"},
		{"STRATA_PLUGIN_REATTACH", "none", "plugins to attach to instead of starting them: the line a plugin run with STRATA_PLUGIN_DEBUG=1 prints (debugging; PLUGINS.md)"},
		{"STRATA_GROUP_COMMIT", "on", "SQLite: saves queued for an application's one writer are committed together, each in its own savepoint (off: one transaction each; force: always the grouped path)"},
		{"STRATA_DEMO", "off", "1: create a demo application when none exists, print its sign-in at every start (as --demo)"},
		{"SERVICE_ALLOW_NEW_APP", "off", "1: permit POST /api/new-app (anyone may create an application)"},
		{"SERVICE_PUBLIC_URL", "", "external base URL (http:// or https://): links in mails, OAuth redirects"},
		{"STRATA_MAX_BODY_BYTES", fmt.Sprint(config.DefaultMaxBodyBytes), "request body cap in bytes; larger bodies get 413 too_large"},
		{"STRATA_BODY_TIMEOUT", "30s", "time allowed to send a request body; a slower one gets 408 body_timeout"},
		{"STRATA_WRITE_TIMEOUT", "2m", "time to answer an ordinary request once its body is in (0: none)"},
		{"STRATA_APP_MAX_CONCURRENT", "64", "requests one application may have in progress (0: no cap)"},
		{"STRATA_APP_QUEUE_TIMEOUT", "5s", "how long a request over its app's cap waits before 503 app_busy"},
		{"STRATA_MAX_BATCH_REQUESTS", fmt.Sprint(config.DefaultMaxBatchRequests), "most requests in one POST /<app>/api/batch; more get 413 batch_too_large"},
		{"STRATA_MAX_UPLOAD_BYTES", fmt.Sprint(config.DefaultMaxUploadBytes), "cap of one uploaded file in bytes; larger files get 413 too_large"},
		{"STRATA_METRICS_ADDR", "", "serve the Prometheus metrics on this address too (e.g. 127.0.0.1:9090, path /metrics)"},
		{"STRATA_METRICS_TOKEN", "", "serve the metrics at /metrics on the main port to the bearer of this token"},
		{"STRATA_MAX_BACKUP_UPLOAD_BYTES", "4294967296", "cap of an archive sent to POST /<app>/api/backups/upload (backups live in <data-dir>/backups)"},
		{"STRATA_CURVES_DIR", "<data-dir>/curves", "extra or replacement radiocarbon curves (.14c); passed on to plugins"},
		{"STRATA_CHANGELOG_MAX_AGE", "720h", "how long each app's change log keeps a change (offline sync resumes within it, else starts again; live streams replay at most 15m of it)"},
		{"STRATA_CHANGELOG_MAX_EVENTS", "1000000", "most changes each app's change log keeps (live streams replay at most 50000 of them)"},
		{"STRATA_REALTIME_PER_APP", "1000", "open live streams (GET /<app>/api/realtime) of one application; more get 429 rate_limited"},
		{"STRATA_REALTIME_PER_USER", "20", "open live streams of one user (or API key); more get 429 rate_limited"},
		{"STRATA_REALTIME_BUFFER", "256", "events waiting for a slow live stream before it gets resync and is dropped"},
		{"STRATA_SYNC_HOLD", "10m", "how long a pushed offline mutation waits for its device's previous one (seq - 1) before it is applied anyway and marked as a conflict"},
		{"REFMGR_ZOTERO_URL", "https://api.zotero.org", "Zotero Web API base URL for the refmgr plugin (its setting zotero_url in <plugin dir>/refmgr.json wins); passed on to plugins"},
	}
	// File storage: S3-compatible object storage when STRATA_S3_BUCKET is
	// set, else the local disk under the data folder.
	envFiles = []envVar{
		{"STRATA_S3_BUCKET", "", "store uploaded files in this S3 bucket (checked at start) instead of <data-dir>/files; the other STRATA_S3_ variables need it"},
		{"STRATA_S3_ENDPOINT", s3store.DefaultEndpoint, "S3-compatible server's base URL (http:// or https://), e.g. http://127.0.0.1:9000 for MinIO"},
		{"STRATA_S3_REGION", "", "S3 region (e.g. eu-central-1); empty: the server's default"},
		{"STRATA_S3_ACCESS_KEY", "", "S3 access key; with STRATA_S3_SECRET_KEY, or neither to use AWS_*/MINIO_* variables or an instance role"},
		{"STRATA_S3_SECRET_KEY", "", "S3 secret key"},
		{"STRATA_S3_PREFIX", "", "put before every object name <app>/<key> as is, e.g. strata/"},
		{"STRATA_S3_PATH_STYLE", "auto", "1: always put the bucket in the URL's path; unset or 0: in the host name on AWS and Google, in the path elsewhere"},
	}
	// Read on every send or sign-in, so they can change without a restart.
	envMail = []envVar{
		{mail.EnvAPIKey, "", "mail provider API key; mail works only when this and " + mail.EnvFromAddress + " are set"},
		{mail.EnvFromAddress, "", "sender address"},
		{mail.EnvFromName, mail.DefaultFromName, "sender display name"},
		{mail.EnvProviderURL, mail.DefaultProviderURL, "base URL of the mail provider's API"},
	}
	envOAuth = []envVar{
		{oauth.EnvIdpAAuthURL, oauth.DefaultIdpAAuthURL, "OAuth provider idp_a: authorization endpoint"},
		{oauth.EnvIdpATokenURL, oauth.DefaultIdpATokenURL, "OAuth provider idp_a: token endpoint"},
		{oauth.EnvIdpAUserinfoURL, oauth.DefaultIdpAUserinfoURL, "OAuth provider idp_a: userinfo endpoint"},
		{oauth.EnvIdpBAuthURL, oauth.DefaultIdpBAuthURL, "OAuth provider idp_b: authorization endpoint"},
		{oauth.EnvIdpBTokenURL, oauth.DefaultIdpBTokenURL, "OAuth provider idp_b: token endpoint"},
	}
)

// envRate lists the rate limits (CONTRACT §10) and the trusted proxies.
var envRate = func() []envVar {
	var out []envVar
	for _, r := range config.RateEnv() {
		out = append(out, envVar{r[0], r[2], r[3] + ", 0: no limit (as --" + r[1] + "); counted per node, in memory"})
	}
	return append(out, envVar{"STRATA_TRUSTED_PROXIES", "none", "reverse proxies (IP addresses, CIDR prefixes) whose X-Forwarded-For names the client address of the rate limits (as --trusted-proxies)"})
}()

func join(groups ...[]envVar) []envVar {
	var out []envVar
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

// appCreateFlags binds the flags of app create to p.
func appCreateFlags(p *apps.CreateParams) func(*config.Config, *flag.FlagSet) {
	return func(c *config.Config, fs *flag.FlagSet) {
		c.RegisterStorageFlags(fs)
		fs.StringVar(&p.Email, "email", "", "email of the first super_admin (required)")
		fs.StringVar(&p.Password, "password", "", "password of the first super_admin (or STRATA_ADMIN_PASSWORD, or stdin)")
		fs.StringVar(&p.Definition, "definition", "", "description of the application")
		fs.StringVar(&p.AdminName, "admin-name", "", "display name of the first super_admin")
	}
}

// commands lists every command and subcommand, in the order of the
// overview.
var commands = []command{
	{
		name: "serve", summary: "run the HTTP server and the plugins",
		text: "Serves every application under /<app>/api until SIGINT or SIGTERM, then stops accepting,\n" +
			"lets running requests finish (up to 15 s) and stops the plugins. Pending migrations are\n" +
			"applied at start. Plugins are the executables of the plugin folder. The listen address\n" +
			"is taken first: when it is in use, serve stops before it makes anything.",
		flags: (*config.Config).RegisterFlags,
		env:   join(envServer, envRate, envStorage, envFiles, []envVar{envSecretKey, envBcrypt}, envMail, envOAuth),
	},
	{
		name: "app", args: "SUBCOMMAND", summary: "manage applications (create, list, export, import, adopt)",
		text: "Subcommands:\n  create   create an application and its first super_admin\n  list     list the applications\n" +
			"  export   write an application's portable archive (a backup)\n  import   restore an archive, onto either engine\n" +
			"  adopt    register a BraDypUS application folder for its major upgrade",
	},
	{
		name: "app create", args: "NAME", required: []string{"email"},
		summary: "create an application and its first super_admin",
		text: "NAME is lower case letters, digits and _, starting with a letter, and not a reserved\n" +
			"name (api, login, ...). The password is taken from --password, else\n" +
			"STRATA_ADMIN_PASSWORD, else the first line of stdin, so it need not appear in the\n" +
			"process list.",
		flags: appCreateFlags(new(apps.CreateParams)),
		env:   join(envStorage, []envVar{envBcrypt, envAdminPwd}),
	},
	{
		name: "app list", summary: "list the applications (name, tab, description)",
		text:  "Prints one line per application: its name, a tab, its description.",
		flags: storageFlags,
		env:   envStorage,
	},
	{
		name: "app export", args: "NAME",
		summary: "write an application's portable archive (a backup) to stdout or --out",
		text: "The archive (.tar.gz: manifest.json with a SHA-256 per part, every table as NDJSON,\n" +
			"the files' bytes) restores onto either engine with app import, so it moves an\n" +
			"application from SQLite to PostgreSQL. It is read from one snapshot: the server\n" +
			"may keep running. Secret settings stay sealed with the instance key.",
		flags: func(c *config.Config, fs *flag.FlagSet) {
			c.RegisterStorageFlags(fs)
			fs.String("out", "", "write the archive to this file instead of standard output")
		},
		env: envStorage,
	},
	{
		name: "app import", args: "FILE",
		summary: "restore an archive as a new application, or replace one atomically",
		text: "FILE is an archive of app export or of a backup (- reads stdin, with --as). Every part\n" +
			"is checked against the manifest before anything is built; the application is built\n" +
			"beside the live one and swapped in. Archives of older Strata versions are migrated\n" +
			"after loading. Secrets sealed by another instance's key are left out (listed).",
		flags: func(c *config.Config, fs *flag.FlagSet) {
			c.RegisterStorageFlags(fs)
			fs.String("as", "", "the application to create or replace (default: the archive's own)")
		},
		env: envStorage,
	},
	{
		name: "app adopt", args: "PATH",
		summary: "register a BraDypUS application folder; it awaits its major upgrade",
		text: "PATH is a BraDypUS application folder (config.json and db/bdus.sqlite). It is linked\n" +
			"into the data folder's bradypus/ folder (a folder placed there, or in the data folder\n" +
			"itself, is found as well), listed with upgrade \"major\", and every signed-in route of\n" +
			"it answers 409 major_upgrade_required until a super-admin of it runs\n" +
			"POST /<name>/api/upgrade/major with their BraDypUS email and password.",
		flags: func(c *config.Config, fs *flag.FlagSet) {
			c.RegisterStorageFlags(fs)
			fs.String("name", "", "the application's name in Strata (default: the folder's name)")
		},
		env: envStorage,
	},
	{
		name: "migrate", summary: "apply pending system-table migrations to every application",
		text:  "serve does it at start too; migrate lets you do it beforehand, e.g. in a deployment step.",
		flags: storageFlags,
		env:   envStorage,
	},
	{
		name: "secrets", args: "SUBCOMMAND", summary: "manage the instance secret key (rotate)",
		text: "Subcommands:\n  rotate   re-encrypt every application's secrets with a new instance key",
	},
	{
		name: "secrets rotate", summary: "re-encrypt every application's secrets with a new instance key",
		text: "Secret settings (JWT signing secrets, OAuth client secrets, provider API keys, plugin\n" +
			"secrets) are stored encrypted (AES-256-GCM) with the instance key. rotate re-encrypts\n" +
			"every application's secrets, and encrypts any still stored in clear by older versions.\n" +
			"\n" +
			"Key file (STRATA_SECRET_KEY not set): a new key is generated and written first in\n" +
			"<data-dir>/secret.key (mode 0600) with the old keys kept after it; when every\n" +
			"application is done the file keeps the new key alone. An interrupted run leaves every\n" +
			"value readable: run it again. Restart running servers afterwards.\n" +
			"\n" +
			"STRATA_SECRET_KEY (comma-separated base64 keys of 32 bytes, the first encrypts, the\n" +
			"others only decrypt): generate a key (head -c 32 /dev/urandom | base64), give every\n" +
			"server OLD,NEW and restart them, run STRATA_SECRET_KEY=NEW,OLD strata secrets rotate,\n" +
			"then give every server NEW alone. Losing the key loses the secrets: back it up.",
		flags: storageFlags,
		env:   join(envStorage, []envVar{envSecretKey}),
	},
	{
		name: "files", args: "SUBCOMMAND", summary: "check the file store against the applications' files (check)",
		text: "Subcommands:\n  check   compare every file row with the stored bytes; --fix removes orphans",
	},
	{
		name: "files check", summary: "compare every application's files with the file store",
		text: "Lists, per application, the stored blobs no file names (orphans: an upload cut by a\n" +
			"crash between its bytes and its row, a thumbnail a failed replace left), partial uploads\n" +
			"(temporary files, incomplete S3 multipart uploads), and the files whose bytes or\n" +
			"thumbnail are missing or of another size. --fix removes orphans and partial uploads\n" +
			"older than --grace (an upload in flight writes its bytes before its row); it never\n" +
			"deletes a file row. Exits 1 while something is left to look at.",
		flags: func(c *config.Config, fs *flag.FlagSet) { new(filesCheckFlags).bind(c, fs) },
		env:   join(envStorage, envFiles, []envVar{envSecretKey}),
	},
	{
		name: "plugin", args: "SUBCOMMAND", summary: "install plugins and check their binaries (install, trust, list)",
		text: "Subcommands:\n  install  check a plugin executable and put it in the plugin folder\n  trust    record the checksums of executables built in the plugin folder\n  list     list the plugin folder's executables and their checksums",
	},
	{
		name: "plugin install", args: "FILE", summary: "check a plugin executable and put it in the plugin folder",
		text: "Runs FILE as the server would (handshake, Describe), checks its manifest and protocol\n" +
			"version with the server's rules, then writes it to <plugin-dir>/<plugin name> through a\n" +
			"temporary file renamed into place (which works while the old version runs, where cp\n" +
			"fails with \"text file busy\") and records its SHA-256 in <plugin-dir>/.checksums.json.\n" +
			"A running server sees the new file within seconds and reloads the plugin without a\n" +
			"restart (or at once: POST /<app>/api/plugins/NAME/reload); a server refuses to start a\n" +
			"plugin executable whose SHA-256 is not the recorded one.",
		flags: pluginFlags,
		env:   []envVar{{"STRATA_PLUGIN_DIR", config.DefaultPluginDir, "plugin binaries folder"}},
	},
	{
		name: "plugin trust", args: "FILE...", summary: "record the checksums of executables built in the plugin folder",
		text: "For executables already in the plugin folder (make build writes them there): runs each\n" +
			"as the server would (handshake, Describe), checks its manifest and protocol version, and\n" +
			"records its SHA-256 in <plugin-dir>/.checksums.json, so the server starts it. Without\n" +
			"this, a server refuses a rebuilt plugin as changed behind its back. A file outside the\n" +
			"plugin folder is refused: put it there with strata plugin install.",
		flags: pluginFlags,
		env:   []envVar{{"STRATA_PLUGIN_DIR", config.DefaultPluginDir, "plugin binaries folder"}},
	},
	{
		name: "plugin list", summary: "list the plugin folder's executables and their checksums",
		text: "For each executable of the plugin folder: whether its SHA-256 is the recorded one\n" +
			"(ok), differs (MISMATCH: the server refuses it until it is installed again) or is not\n" +
			"recorded yet (the server records it the first time it starts it). Runs nothing.",
		flags: pluginFlags,
		env:   []envVar{{"STRATA_PLUGIN_DIR", config.DefaultPluginDir, "plugin binaries folder"}},
	},
	{name: "version", summary: "print the version", text: "Prints the version of Strata and of Go it was built with."},
	{name: "help", args: "[COMMAND [SUBCOMMAND]]", summary: "show this help, or a command's",
		text: "strata help serve, strata serve --help and strata serve -h print the same text."},
}

// findCommand returns the command named by words ("app", "create"), or
// nil.
func findCommand(words ...string) *command {
	name := strings.Join(words, " ")
	for i := range commands {
		if commands[i].name == name {
			return &commands[i]
		}
	}
	return nil
}

// flagSet is the command's flag set bound to a default configuration, so
// the help shows the built-in defaults.
func (c *command) flagSet() *flag.FlagSet {
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	if c.flags != nil {
		cfg := config.Default()
		c.flags(&cfg, fs)
	}
	return fs
}

// flagWithValue is "--name VALUE", or "--name" for a boolean flag; VALUE
// is the last word of the name, upper case (--data-dir DIR).
func flagWithValue(f *flag.Flag) string {
	if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
		return "--" + f.Name
	}
	if g, ok := f.Value.(flag.Getter); ok {
		if _, isInt := g.Get().(int); isInt {
			return "--" + f.Name + " N"
		}
	}
	words := strings.Split(f.Name, "-")
	return "--" + f.Name + " " + strings.ToUpper(words[len(words)-1])
}

func (c *command) isRequired(name string) bool {
	for _, r := range c.required {
		if r == name {
			return true
		}
	}
	return false
}

// synopsis is the usage line: strata NAME ARGS --required X [--flag X] ...
func (c *command) synopsis() string {
	parts := []string{"strata", c.name}
	if c.args != "" {
		parts = append(parts, c.args)
	}
	var optional []string
	c.flagSet().VisitAll(func(f *flag.Flag) {
		if c.isRequired(f.Name) {
			parts = append(parts, flagWithValue(f))
		} else {
			optional = append(optional, "["+flagWithValue(f)+"]")
		}
	})
	return strings.Join(append(parts, optional...), " ")
}

// writeFlags lists the flags with their meaning and default.
func (c *command) writeFlags(w io.Writer) {
	c.flagSet().VisitAll(func(f *flag.Flag) {
		_, usage := flag.UnquoteUsage(f)
		if f.DefValue != "" && f.DefValue != "false" {
			usage += "; default " + f.DefValue
		}
		fmt.Fprintf(w, "  %s\n      %s\n", flagWithValue(f), usage)
	})
}

// writeHelp prints the complete help of one command.
func (c *command) writeHelp(w io.Writer) {
	fmt.Fprintf(w, "strata %s — %s\n\nUsage:\n  %s\n", c.name, c.summary, c.synopsis())
	if c.text != "" {
		fmt.Fprintf(w, "\n%s\n", c.text)
	}
	if subs := map[string][]string{"app": {"app create", "app list"}, "secrets": {"secrets rotate"}, "plugin": {"plugin install", "plugin trust", "plugin list"}}[c.name]; subs != nil {
		for _, sub := range subs {
			fmt.Fprintln(w)
			findCommand(strings.Fields(sub)...).writeHelp(w)
		}
		return
	}
	fmt.Fprintln(w, "\nFlags:")
	c.writeFlags(w)
	fmt.Fprintln(w, "  -h, --help\n      show this help")
	if len(c.env) > 0 {
		fmt.Fprintln(w, "\nEnvironment (flags override it; it overrides the defaults):")
		writeEnv(w, c.env)
	}
}

func writeEnv(w io.Writer, vars []envVar) {
	for _, v := range vars {
		def := ""
		if v.def != "" {
			def = " (default " + v.def + ")"
		}
		fmt.Fprintf(w, "  %s%s\n      %s\n", v.name, def, v.meaning)
	}
}

// writeUsage prints the overview: every command with its synopsis, and
// every environment variable Strata reads.
func writeUsage(w io.Writer) {
	fmt.Fprint(w, "Strata — multi-application records service\n\nUsage:\n")
	for i := range commands {
		if commands[i].name != "app" {
			fmt.Fprintf(w, "  %s\n", commands[i].synopsis())
		}
	}
	fmt.Fprint(w, "\nCommands:\n")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-12s %s\n", c.name, c.summary)
	}
	fmt.Fprint(w, "\nRun \"strata help COMMAND\" or \"strata COMMAND --help\" for a command's flags, defaults\n"+
		"and environment.\n\nFlags of serve:\n")
	findCommand("serve").writeFlags(w)
	fmt.Fprint(w, "\nEnvironment (flags override it; it overrides the defaults):\n")
	writeEnv(w, join(envServer, envRate, envStorage, envFiles, []envVar{envSecretKey, envBcrypt, envAdminPwd}, envMail, envOAuth))
	fmt.Fprint(w, "\nREADME.md (Configuration) has the details; docs/api.md is the API reference.\n")
}

// helpRequest is returned by a command asked for -h or --help: run prints
// the command's help to stdout and exits 0.
type helpRequest struct{ command string }

func (h helpRequest) Error() string { return "help requested for " + h.command }

// isHelp reports whether arg asks for help.
func isHelp(arg string) bool {
	switch arg {
	case "-h", "-help", "--help", "help":
		return true
	}
	return false
}

// cmdHelp serves strata help [COMMAND [SUBCOMMAND]].
func cmdHelp(args []string, e env) error {
	if len(args) == 0 {
		writeUsage(e.stdout)
		return nil
	}
	if len(args) == 1 && isHelp(args[0]) { // strata help --help
		args = []string{"help"}
	}
	c := findCommand(args...)
	if c == nil {
		return usageError{fmt.Sprintf("no help for %q: unknown command (run strata help)", strings.Join(args, " ")), ""}
	}
	c.writeHelp(e.stdout)
	return nil
}
