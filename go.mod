module github.com/dpperf/dpperf

go 1.26.8

require (
	github.com/cilium/ebpf v0.22.0 // indirect
	github.com/gopacket/gopacket v1.7.7 // indirect
	go.yaml.in/yaml/v3 v3.0.6 // indirect
	golang.org/x/net v0.55.0 // indirect
	golang.org/x/sys v0.45.0 // indirect
	gonum.org/v1/gonum v0.17.0 // indirect
)
