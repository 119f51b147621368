// Package record is dpperf's trace recorder. It attaches ring buffers of
// package trace to the workers that its policies select, drains them
// periodically, and writes each component's events as a CTF 1.8 trace and
// its captured packets as pcapng:
//
//	<target_root>/<timestamp>/<label path>/metadata
//	<target_root>/<timestamp>/<label path>/<thread>
//	<target_root>/<timestamp>/<label path>.pcapng
//
// The configuration is YAML (see Config and docs/record.md). Policies are
// matched by component label (exact, prefix or suffix; the strongest match
// wins, then the default policy) and optionally by thread name.
//
// Every CTF packet and pcapng section is written with one write call after
// the metadata, so a recording stopped by a crash or Ctrl-C leaves files
// that read to their last whole packet.
package record
