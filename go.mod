module github.com/dpperf/dpperf

go 1.26.8

require (
	github.com/cilium/ebpf v0.22.0
	github.com/gopacket/gopacket v1.7.7 // indirect
	go.yaml.in/yaml/v3 v3.0.6
	golang.org/x/sys v0.45.0
	gonum.org/v1/gonum v0.17.0 // indirect
)
