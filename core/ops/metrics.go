package ops

import (
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
	m.reg.MustRegister(m.requests, m.latency,
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
)

func (p pluginCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- pluginUp
	ch <- pluginRestarts
}

func (p pluginCollector) Collect(ch chan<- prometheus.Metric) {
	for _, s := range p.src.PluginStats() {
		up := 0.0
		if s.State == "running" {
			up = 1
		}
		ch <- prometheus.MustNewConstMetric(pluginUp, prometheus.GaugeValue, up, s.Name, s.State)
		ch <- prometheus.MustNewConstMetric(pluginRestarts, prometheus.CounterValue, float64(s.Restarts), s.Name)
	}
}
