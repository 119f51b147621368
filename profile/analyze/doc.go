// Package analyze answers "where does the time of each request go, and what
// slowed it down?": it turns path events into per-request records
// (event.Record), records into per-stage latency distributions per group
// (type, size, device, CPU), throughput and queue occupancy, and two
// profiles into a bottleneck localization by Latency Amplification Degree.
//
// Pipeline: a Builder correlates events on the path's keys into Records
// (single goroutine, bounded number of open requests); records pass the
// task Filter (device, type, size, 1-of-N sampling) and are sharded in
// batches over worker goroutines, each folding them into its own
// Aggregator of fixed-size histograms; the aggregators merge exactly at
// the end (map-reduce). Summarize computes the Profile:
//
//   - stage latency = time between consecutive observed events of a
//     record; when events in between were not observed the stage is
//     reported merged ("G2I+I2D") and never split by guesswork;
//   - throughput = requests × sample / window, bytes likewise;
//   - occupancy of a stage = Σ stage latency × sample / window, the
//     time-average number of requests in the stage (Little's law L = λW
//     with λ = arrivals/window and W = mean latency).
//
// Nothing here needs a kernel.
package analyze
