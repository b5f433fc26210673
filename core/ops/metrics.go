package ops

import (
	"context"
	"crypto/subtle"
	"database/sql"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/strata-archaeo/strata/core/api"
	"github.com/strata-archaeo/strata/core/errs"
)

// PluginStat is one plugin's supervision figures.
type PluginStat struct {
	Name     string
	State    string
	Restarts int
	// Calls the host made to the plugin, how many failed, and the time
	// they took in all (rate(seconds)/rate(calls) is the mean latency).
	Calls, Errors int64
	Seconds       float64

	// RestartsByReason splits Restarts by why the process was lost
	// (exited, unresponsive, start_failed).
	RestartsByReason map[string]int
}

// Metrics are the server's Prometheus metrics, in a registry of their own
// (nothing global): requests by route template, method and status with
// their latency, the Go runtime and process, the PostgreSQL pool, and the
// plugins. No label carries a value a client sent: routes are templates
// ("/:app/api/record/:tb/:id"), an unmatched path is "unmatched".
type Metrics struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	signIns  *prometheus.CounterVec
}

// Sign-in outcomes, the only values of the outcome label.
var signInOutcomes = map[string]string{
	"":                     "success",
	"login_data_not_valid": "failure",
	"account_locked":       "locked",
	"rate_limited":         "rate_limited",
	"not_enough_privilege": "pending",
}

// NewMetrics builds the metrics; pool (nil: none) is the PostgreSQL pool
// shared by the apps, plugins (nil: none) the plugin host.
func NewMetrics(pool *sql.DB, plugins Plugins) *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "strata_http_requests_total", Help: "HTTP requests answered, by route template, method and status.",
	}, []string{"route", "method", "status"})
	m.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "strata_http_request_duration_seconds", Help: "Time to answer HTTP requests, by route template and method.",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
	}, []string{"route", "method"})
	m.signIns = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "strata_signin_attempts_total",
		Help: "Password sign-in attempts by outcome: success, failure (wrong email or password), locked (refused by the account lock), rate_limited, pending, error.",
	}, []string{"outcome"})
	for _, o := range signInOutcomes {
		m.signIns.WithLabelValues(o) // every outcome shows from the start, at 0
	}
	m.reg.MustRegister(m.requests, m.latency, m.signIns,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if pool != nil {
		m.reg.MustRegister(collectors.NewDBStatsCollector(pool, "postgres"))
	}
	if plugins != nil {
		m.reg.MustRegister(pluginCollector{plugins})
	}
	return m
}

// Middleware counts and times every request.
func (m *Metrics) Middleware(c *gin.Context) {
	start := time.Now()
	c.Next()
	route := c.FullPath()
	if route == "" {
		route = "unmatched"
	}
	method := c.Request.Method
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions:
	default:
		method = "other" // a method name is client-supplied text
	}
	m.requests.WithLabelValues(route, method, strconv.Itoa(c.Writer.Status())).Inc()
	m.latency.WithLabelValues(route, method).Observe(time.Since(start).Seconds())
}

// SignIn counts one password sign-in attempt by its result (err nil: it
// succeeded).
func (m *Metrics) SignIn(err error) {
	outcome, ok := signInOutcomes[errs.CodeOf(err)]
	if !ok {
		outcome = "error"
	}
	if err == nil {
		outcome = "success"
	}
	m.signIns.WithLabelValues(outcome).Inc()
}

// WatchJobs reports the instance's jobs by state at each scrape, read
// through count (the job system's CountByState).
func (m *Metrics) WatchJobs(count func(ctx context.Context) (map[string]int64, error)) {
	m.reg.MustRegister(jobCollector{count})
}

// WatchGate reports the requests refused by the per-app concurrency cap.
func (m *Metrics) WatchGate(refused func() int64) {
	m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "strata_app_busy_total", Help: "Requests refused with app_busy: their application had too many requests in progress.",
	}, func() float64 { return float64(refused()) }))
}

var jobsDesc = prometheus.NewDesc("strata_jobs", "Jobs of the instance by state (queued, running, done, failed, cancelled).", []string{"state"}, nil)

type jobCollector struct {
	count func(ctx context.Context) (map[string]int64, error)
}

func (j jobCollector) Describe(ch chan<- *prometheus.Desc) { ch <- jobsDesc }

func (j jobCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	counts, err := j.count(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(jobsDesc, err)
		return
	}
	for state, n := range counts {
		ch <- prometheus.MustNewConstMetric(jobsDesc, prometheus.GaugeValue, float64(n), state)
	}
}

// Handler serves the metrics in Prometheus's text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

var errNoMetrics = errs.New(errs.NotFound, "route_not_found", "no such route")

// Route is GET /metrics on the main port, answered only to the bearer of
// token; without a token the metrics are not on the main port (404) and
// are served on their own address instead (STRATA_METRICS_ADDR).
func (m *Metrics) Route(token string) api.Route {
	h := m.Handler()
	return api.Route{Scope: api.Root, Method: http.MethodGet, Path: "/metrics", Handler: func(c *gin.Context) {
		if token == "" {
			api.Fail(c, errNoMetrics)
			return
		}
		got, ok := strings.CutPrefix(c.GetHeader("Authorization"), "Bearer ")
		if !ok || subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), []byte(token)) != 1 {
			c.Header("WWW-Authenticate", `Bearer realm="metrics"`)
			api.Fail(c, errs.New(errs.Unauthenticated, "invalid_token", "the metrics need their token (Authorization: Bearer)"))
			return
		}
		h.ServeHTTP(c.Writer, c.Request)
	}}
}

// pluginCollector reads the plugins' figures at each scrape.
type pluginCollector struct{ src Plugins }

var (
	pluginUp       = prometheus.NewDesc("strata_plugin_up", "1 when the plugin's process is running and serving calls.", []string{"plugin", "state"}, nil)
	pluginRestarts = prometheus.NewDesc("strata_plugin_restarts_total", "Restarts of the plugin's process since the server started.", []string{"plugin"}, nil)
	pluginCalls    = prometheus.NewDesc("strata_plugin_calls_total", "gRPC calls the server made to the plugin.", []string{"plugin"}, nil)
	pluginErrors   = prometheus.NewDesc("strata_plugin_call_errors_total", "gRPC calls to the plugin that failed.", []string{"plugin"}, nil)
	pluginSeconds  = prometheus.NewDesc("strata_plugin_call_seconds_total", "Time spent in gRPC calls to the plugin.", []string{"plugin"}, nil)

	pluginRestartsBy = prometheus.NewDesc("strata_plugin_restarts_by_reason_total",
		"Restarts of the plugin's process by why it was lost: exited, unresponsive (killed by the health check), start_failed.", []string{"plugin", "reason"}, nil)
)

func (p pluginCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- pluginUp
	ch <- pluginRestarts
	ch <- pluginRestartsBy
	ch <- pluginCalls
	ch <- pluginErrors
	ch <- pluginSeconds
}

func (p pluginCollector) Collect(ch chan<- prometheus.Metric) {
	for _, s := range p.src.PluginStats() {
		up := 0.0
		if s.State == "running" {
			up = 1
		}
		ch <- prometheus.MustNewConstMetric(pluginUp, prometheus.GaugeValue, up, s.Name, s.State)
		ch <- prometheus.MustNewConstMetric(pluginRestarts, prometheus.CounterValue, float64(s.Restarts), s.Name)
		for reason, n := range s.RestartsByReason {
			ch <- prometheus.MustNewConstMetric(pluginRestartsBy, prometheus.CounterValue, float64(n), s.Name, reason)
		}
		ch <- prometheus.MustNewConstMetric(pluginCalls, prometheus.CounterValue, float64(s.Calls), s.Name)
		ch <- prometheus.MustNewConstMetric(pluginErrors, prometheus.CounterValue, float64(s.Errors), s.Name)
		ch <- prometheus.MustNewConstMetric(pluginSeconds, prometheus.CounterValue, s.Seconds, s.Name)
	}
}
