// Package fleet holds the Prometheus configuration, recording rules and
// Grafana dashboard for a fleet of dpperf profile collectors
// (docs/profile.md, "Running a fleet"); its test checks that they parse
// and name only what the collector exports.
package fleet
