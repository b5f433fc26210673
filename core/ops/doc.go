// Package ops answers the operations endpoints a load balancer and a
// scraper call, outside any application and without credentials:
// GET /healthz (the process answers), GET /readyz (it can serve: the
// database answers, every application's migrations are applied, no
// plugin waits for an administrator) and the Prometheus metrics.
//
// Readiness is cheap to ask often: the migration check, which reads every
// application, is remembered for a few seconds. No answer carries a
// secret, an application's data or a client-supplied value.
package ops
