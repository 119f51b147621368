# dpperf build. `make run` and `make test` install what is missing first.
SHELL      := /bin/bash
# An installed Go older than the one go.mod names fetches that one through
# the module proxy (Go 1.21 or newer can; Debian 12's 1.19 cannot).
export GOTOOLCHAIN = auto
GO         ?= go
GOBIN      := $(shell $(GO) env GOPATH)/bin
BIN        := bin/dpperf
BPF_OUT    := build/bpf
CLANG      ?= clang
BPF_CFLAGS := -O2 -g -target bpf -Wall -Wno-unused-value -Wno-compare-distinct-pointer-types \
              -Ibuild/include -I/usr/include/x86_64-linux-gnu
LINUX_TAR  := /usr/src/linux-source-6.1.tar.xz
SELFTESTS  := linux-source-6.1/tools/testing/selftests/bpf/progs

EXAMPLES   := $(patsubst examples/xdp/%.c,$(BPF_OUT)/%.o,$(wildcard examples/xdp/*.c))
THIRDPARTY := $(BPF_OUT)/test_xdp_noinline.o

.PHONY: all setup build bpf run test lint unit bench fuzz clean evidence table2

all: build bpf

setup:
	@bash scripts/setup.sh

build:
	$(GO) build -buildvcs=auto -o $(BIN) ./cmd/dpperf

# Compiled BPF objects: our examples and third-party programs from Debian's
# linux-source package. Tests read them from build/bpf.
bpf: $(EXAMPLES) $(THIRDPARTY)

build/include/gnu/stubs-32.h:
	@mkdir -p $(dir $@) && touch $@

$(BPF_OUT)/%.o: examples/xdp/%.c examples/xdp/common.h build/include/gnu/stubs-32.h
	@mkdir -p $(BPF_OUT)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

# Variants that include another example's source.
$(BPF_OUT)/countmin10.o $(BPF_OUT)/countmin15.o $(BPF_OUT)/countmin20.o: examples/xdp/countmin.c
$(BPF_OUT)/quiclb6.o: examples/xdp/quiclb.c
$(BPF_OUT)/rtp_table.o: examples/xdp/rtp_transcode.c
$(BPF_OUT)/dnsbucket.o: examples/xdp/dnscache.c
$(BPF_OUT)/labelcase.o: examples/xdp/labels.c
# The plainest build, as the object's comment says: no -g, so no BTF.
$(BPF_OUT)/text_nobtf.o: examples/xdp/text_nobtf.c examples/xdp/common.h build/include/gnu/stubs-32.h
	@mkdir -p $(BPF_OUT)
	$(CLANG) $(filter-out -g,$(BPF_CFLAGS)) -c $< -o $@

build/src/test_xdp_noinline.c:
	@mkdir -p build/src
	tar -xJf $(LINUX_TAR) -O $(SELFTESTS)/test_xdp_noinline.c > $@.tmp && mv $@.tmp $@

$(BPF_OUT)/test_xdp_noinline.o: build/src/test_xdp_noinline.c build/include/gnu/stubs-32.h
	@mkdir -p $(BPF_OUT)
	$(CLANG) $(BPF_CFLAGS) -w -c $< -o $@

run: setup build bpf
	$(BIN) targets
	$(BIN) bound --target nfp-agilio-cx $(BPF_OUT)/fig2.o
	$(BIN) bound --target host /usr/lib/x86_64-linux-gnu/bpf/xdpfilt_alw_all.o
	$(BIN) model estimate examples/model/echo-accel/spec.yaml

# Our examples of the paper's Table 2 programs against its measurements (docs/nfp.md).
table2: build bpf
	bash scripts/table2.sh > docs/nfp-table2.md

lint:
	$(GO) vet ./...
	$(GOBIN)/staticcheck ./...

unit:
	$(GO) test -count=1 ./...

test: setup bpf lint unit fuzz-smoke test-nvme-tcp test-nvme-tcp-2host test-fleet

# The pipeline's fuzz targets for a fixed number of executions (no clock):
# object bytes through loading, graph, naive bounds and symbolic execution
# (FuzzObject, no solver), and through every command that reads programs
# with z3 (FuzzPipeline, slower); the interpreter against symbolic
# execution on generated programs.
FUZZ_EXECS     ?= 2000
PIPELINE_EXECS ?= 20
.PHONY: fuzz-smoke
fuzz-smoke:
	$(GO) test -run '^$$' -fuzz '^FuzzObject$$' -fuzztime $(FUZZ_EXECS)x -fuzzminimizetime 5x ./bound/
	$(GO) test -run '^$$' -fuzz '^FuzzInstructions$$' -fuzztime $(FUZZ_EXECS)x -fuzzminimizetime 5x ./bound/
	$(GO) test -run '^$$' -fuzz '^FuzzPipeline$$' -fuzztime $(PIPELINE_EXECS)x -fuzzminimizetime 5x ./cmd/dpperf/
	$(GO) test -run '^$$' -fuzz '^FuzzInterpAgreesWithSymex$$' -fuzztime $(FUZZ_EXECS)x -fuzzminimizetime 5x ./symex/

bench: setup build bpf
	$(GO) test -run '^$$' -bench . -benchmem ./...
	# 10^6 ordered paths (goal: memory under 512 MiB)
	/usr/bin/time -f 'max RSS %M KB' $(GO) test ./bound -run '^$$' -bench Enumerate -benchtime 1000000x
	# time to the naive bound and to the slowest satisfiable path of every program
	scripts/bench-bound.sh $(BIN) $(BPF_OUT)
	# the same on the NFP target under both metrics (goal: every SSP within 10 s)
	EXPLODE=0 scripts/bench-bound.sh $(BIN) $(BPF_OUT) nfp-agilio-cx 60s pps
	EXPLODE=0 scripts/bench-bound.sh $(BIN) $(BPF_OUT) nfp-agilio-cx 60s bps
	# exact interfaces of Katran, every feasible path (goal: each within 7 s on 2 cores)
	for p in balancer_ingress_v4 balancer_ingress_v6; do \
		/usr/bin/time -f "interface --resolution 0 $$p: %e s, max RSS %M KB" \
			$(BIN) interface --resolution 0 -program $$p $(BPF_OUT)/test_xdp_noinline.o > /dev/null || exit 1; \
	done

# Timing evidence, never part of `make test` (it reads clocks): run it on an
# otherwise idle machine. First MUTANTS mutated objects through every command
# with a time limit (docs/evidence/DATE-mutants.md: overruns, exit codes,
# stack traces); then `make evidence-bound`: this machine calibrated afresh
# and fitted (`make calibrate fit`, about 12 minutes; CALIBRATE=no keeps
# build/host-fit.yaml; EVIDENCE_TARGET=host takes the quick calibration of
# `--target host` instead), and the bound of every program below held
# against REPS replays of its example with BPF_PROG_TEST_RUN, every path a
# replay runs against its own predicted rate, written to
# docs/evidence/DATE-bound-*.{md,json} (fails on a violated guarantee); then the profiler's timing tests
# (contention localized, ring wake-ups) and the NVMe/TCP run's timing checks;
# then the path models fitted to profiles and checked at other loads (loop
# device and the NVMe/TCP guest, docs/evidence/model-fit-*-DATE.md).
REPS            ?= 5
EVIDENCE_TARGET ?= build/host-fit.yaml
CALIBRATE       ?= yes
MUTANTS         ?= 200
MUTANT_OBJS     := $(filter-out %/test_xdp_noinline.o,$(wildcard $(BPF_OUT)/*.o)) $(wildcard /usr/lib/x86_64-linux-gnu/bpf/*.o)
EVIDENCE_PROGS  := $(addprefix $(BPF_OUT)/,fig2.o parser.o counter.o loop.o call.o legacy.o flowtable.o flowcount.o flowcount_v2.o) \
                   $(filter-out %/xdpdump_bpf.o %/xdp-dispatcher.o,$(wildcard /usr/lib/x86_64-linux-gnu/bpf/*.o)) \
                   /usr/lib/x86_64-linux-gnu/bpf/xdp-dispatcher.o:xdp_dispatcher \
                   $(BPF_OUT)/test_xdp_noinline.o:balancer_ingress_v4 $(BPF_OUT)/test_xdp_noinline.o:balancer_ingress_v6
evidence: setup build bpf
	$(GO) run ./internal/cmd/mutants -bin $(BIN) -n $(MUTANTS) -out docs/evidence $(MUTANT_OBJS)
	$(MAKE) evidence-bound
	$(GO) test -count=1 -tags evidence -run 'Contention|Wakes' ./profile/collect/
	rm -rf build/nvme-tcp/evidence
	bash scripts/e2e/nvme-tcp-qemu.sh build/nvme-tcp/evidence
	bash scripts/e2e/nvme-tcp-check.sh --timing build/nvme-tcp/evidence
	bash scripts/e2e/model-fit-loop.sh docs/evidence
	bash scripts/e2e/model-fit-nvme-tcp.sh docs/evidence

.PHONY: evidence-bound
evidence-bound: setup build bpf
ifeq ($(EVIDENCE_TARGET):$(CALIBRATE),build/host-fit.yaml:yes)
	$(MAKE) calibrate fit
endif
	$(GO) run ./internal/cmd/evidence -bin $(BIN) -target $(EVIDENCE_TARGET) -reps $(REPS) -out docs/evidence $(EVIDENCE_PROGS)

# Path explosion: stream intermediate bounds of explode_pairs for DURATION
# (default 10m), then print paths per second and peak memory.
DURATION ?= 10m
.PHONY: demo-explode
demo-explode: setup build bpf
	scripts/explode-demo.sh $(BIN) $(BPF_OUT)/explode_pairs.o $(DURATION)

fuzz: setup bpf
	@for t in $$(grep -rl 'func Fuzz' --include='*_test.go' . | xargs -n1 dirname | sort -u); do \
	  for f in $$(grep -ho 'func Fuzz[A-Za-z0-9_]*' $$t/*_test.go | cut -c6-); do \
	    echo "fuzz $$t $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime 30s $$t || exit 1; \
	  done; done

clean:
	rm -rf bin build

# The object loader's fuzz targets for FUZZTIME (default 30s); short
# minimizing, as each input goes through the whole ELF reader.
.PHONY: fuzz-loader
fuzz-loader:
	$(GO) test -run '^$$' -fuzz '^FuzzOpen$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 1s ./bpfprog/
	$(GO) test -run '^$$' -fuzz '^FuzzLegacyDefs$$' -fuzztime $(FUZZTIME) ./bpfprog/

# --- model ---
.PHONY: test-model bench-model fio-model
test-model:
	$(GO) test -count=1 ./model/...
	$(GO) test -count=1 -run Model ./cmd/dpperf/

bench-model:
	$(GO) test -run '^$$' -bench . -benchmem ./model/analytic/ ./model/opt/ ./model/sim/ ./model/fit/
# Measure the opaque-SSD example's fio curve again (root; about 45 s) and
# fit it: examples/model/opaque-ssd/{fio.json,fit.txt,fitted.yaml}.
fio-model: build
	cd examples/model/opaque-ssd && bash run-fio.sh fio.json
	$(BIN) model fit --curve examples/model/opaque-ssd/fio.json --vertex read.ssd \
	  --write examples/model/opaque-ssd/fitted.yaml examples/model/opaque-ssd/spec.yaml > examples/model/opaque-ssd/fit.txt
# --- record ---
.PHONY: test-record bench-record fuzz-record
test-record: setup
	$(GO) test -count=1 ./record/... ./record/pipeline/ ./cmd/dpperf/

# Hot-path cost per event and sustained recording rate; the machine's load
# moves them, so they run several times (read the minimum and the median)
# and the load average is printed before and after.
bench-record:
	@cat /proc/loadavg 2>/dev/null || true
	$(GO) test -run '^$$' -bench . -benchmem -count=$(or $(BENCH_COUNT),6) ./record/trace/ ./record/
	@cat /proc/loadavg 2>/dev/null || true

# Each fuzz target of record for FUZZTIME (default 30s). Short minimizing:
# FuzzAnalyze runs through files, and the default minute per new input
# would leave little time for fuzzing.
FUZZTIME ?= 30s
fuzz-record:
	$(GO) test -run '^$$' -fuzz '^FuzzReader$$' -fuzztime $(FUZZTIME) ./record/ctf/
	$(GO) test -run '^$$' -fuzz '^FuzzParseMetadata$$' -fuzztime $(FUZZTIME) ./record/ctf/
	$(GO) test -run '^$$' -fuzz '^FuzzAnalyze$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 1s ./record/analyze/
	$(GO) test -run '^$$' -fuzz '^FuzzParseFormat$$' -fuzztime $(FUZZTIME) ./record/kernel/
	$(GO) test -run '^$$' -fuzz '^FuzzParseConfig$$' -fuzztime $(FUZZTIME) ./record/
	$(GO) test -run '^$$' -fuzz '^FuzzParseTimestamps$$' -fuzztime $(FUZZTIME) ./record/
# --- profile ---
.PHONY: test-profile e2e-profile bench-profile bench-profile-overhead generate-profile e2e-nvme-tcp test-nvme-tcp test-nvme-tcp-2host
# Unit, golden and live tests of dpperf profile (live ones need root and fio).
test-profile: setup
	$(GO) test -count=1 ./profile/... ./cmd/dpperf/
# Profile fio on a loop device and write the reports into examples/profile;
# E2E_FLAGS=--overhead adds fio IOPS/CPU with and without the collector.
e2e-profile: setup build
	bash scripts/e2e/profile-block-loop.sh examples/profile $(E2E_FLAGS)
bench-profile:
	$(GO) test -run '^$$' -bench . -benchmem ./profile/...
# Collector overhead: fio IOPS and CPU in ROUNDS pairs of WINDOW-second
# windows without and with the BPF collector during one fio run per
# iodepth; BACKING=tmpfs for a CPU-only device; ALTERNATE=500ms detaches
# and attaches the collector every 500 ms in one dpperf process instead
# (DURATION seconds per iodepth); PROFILE_FLAGS="--sample 1000" (needs
# root and fio).
bench-profile-overhead: setup build
	bash scripts/e2e/profile-overhead.sh examples/profile/overhead.txt
# Regenerate the BPF collector from profile/collect/bpf/block.c (the output
# is committed, so building needs no clang).
generate-profile:
	cd profile/collect && $(GO) generate ./...
# NVMe/TCP under qemu (Debian's 6.1 kernel, nvmet-tcp on 127.0.0.1), tracefs and
# BPF collectors on the same requests: about two minutes, the kernel package
# included. e2e-nvme-tcp rewrites the examples; test-nvme-tcp (part of
# `make test`) writes to build/nvme-tcp/out and checks the reports.
e2e-nvme-tcp: setup build
	bash scripts/e2e/nvme-tcp-qemu.sh examples/profile/nvme-tcp
	bash scripts/e2e/nvme-tcp-check.sh examples/profile/nvme-tcp
test-nvme-tcp: setup build
	rm -rf build/nvme-tcp/out
	bash scripts/e2e/nvme-tcp-qemu.sh build/nvme-tcp/out
	bash scripts/e2e/nvme-tcp-check.sh build/nvme-tcp/out
# NVMe/TCP over two qemu guests (part of `make test`): target and initiator
# on a qemu socket link (127.0.0.1 on the host, 169.254.0.0/16 in the
# guests), dpperf --serve on the target, --peer on the initiator; checks
# the join, the clock offset against the guests' stamped clocks and the
# stages against the one-host run (internal/cmd/twohost). Artifacts in
# build/nvme-tcp-2host.
test-nvme-tcp-2host: setup build
	WORK=build/nvme-tcp-2host bash scripts/e2e/nvme-tcp-2host.sh
# A fleet end to end (part of `make test`; root, fio, Debian's prometheus;
# about 40 s): two collectors on two loop devices as two hosts, a
# Prometheus of its own scraping both every second with
# examples/profile/fleet/rules.yml, fio on both; each host's per-stage p99
# from Prometheus (histogram_quantile over the rate of the buckets) within
# one bucket of its collector's JSON report.
.PHONY: test-fleet
test-fleet: setup build
	bash scripts/e2e/profile-fleet.sh
# --- interp ---
.PHONY: test-interp bench-interp fuzz-interp
# Interpreter, map states and kernel runs (testrun needs root).
test-interp: setup bpf
	$(GO) test -count=1 ./mapstate/... ./interp/... ./testrun/...
bench-interp: setup bpf
	$(GO) test -run '^$$' -bench . -benchmem ./interp/
fuzz-interp: setup bpf
	$(GO) test -run '^$$' -fuzz FuzzRun -fuzztime 60s ./interp/
	$(GO) test -run '^$$' -fuzz FuzzKernel -fuzztime 60s ./testrun/
# --- replay ---
.PHONY: test-replay bench-replay fuzz-replay report-interface
# Trace replay, percentiles, root cause (no kernel) and per-class kernel
# times (classtime needs root).
test-replay: setup bpf
	$(GO) test -count=1 ./replay/... ./classtime/ ./examples/interface/...
	$(GO) test -count=1 -run 'PathOf|PathOnGraph' ./cfg/ ./interp/
bench-replay: setup bpf
	$(GO) test -run '^$$' -bench Replay -benchmem -count=$(or $(BENCH_COUNT),3) ./replay/
fuzz-replay: setup bpf
	$(GO) test -run '^$$' -fuzz '^FuzzReader$$' -fuzztime $(or $(FUZZTIME),30s) -fuzzminimizetime 1s ./replay/
# The walk-through of flowtable on the example trace (root for the
# kernel times): examples/interface/{report.txt,cdf.svg}.
report-interface: setup bpf
	$(GO) run ./examples/interface/report -out examples/interface -measure > examples/interface/report.txt
	rm -f examples/interface/cdf.png
# --- interface diff ---
# Regression reports between example pairs: examples/interface/diff-*.txt.
.PHONY: report-diff
XDPFILT := /usr/lib/x86_64-linux-gnu/bpf/xdpfilt
report-diff: build bpf
	$(BIN) interface diff --workers 1 $(BPF_OUT)/flowcount.o $(BPF_OUT)/flowcount_v2.o > examples/interface/diff-flowcount.txt
	$(BIN) interface diff --workers 1 --metric cost $(BPF_OUT)/flowcount.o $(BPF_OUT)/flowcount_v2.o > examples/interface/diff-flowcount-cost.txt
	$(BIN) interface diff --workers 1 $(XDPFILT)_alw_eth.o $(XDPFILT)_dny_eth.o > examples/interface/diff-xdpfilt-alw_eth-dny_eth.txt
	$(BIN) interface diff --max-depth 10 $(XDPFILT)_alw_eth.o $(XDPFILT)_alw_ip.o > examples/interface/diff-xdpfilt-alw_eth-alw_ip.txt
	$(BIN) interface diff --max-depth 10 $(XDPFILT)_alw_ip.o $(XDPFILT)_alw_tcp.o > examples/interface/diff-xdpfilt-alw_ip-alw_tcp.txt
	$(BIN) interface --max-depth 16 --thresholds $(XDPFILT)_alw_ip.o > examples/interface/xdpfilt_alw_ip.d16.thresholds.txt
	$(BIN) interface --max-depth 16 --resolution 150 $(XDPFILT)_alw_ip.o > examples/interface/xdpfilt_alw_ip.d16.r150.py
# --- calibrate ---
.PHONY: test-calibrate calibrate fit
# Micro-programs on the kernel (root), the quick calibration and the bound
# under it on the libxdp1 programs.
test-calibrate: setup bpf
	$(GO) test -count=1 ./calibrate/ ./target/
	$(GO) test -count=1 -run 'TestTargetsCalibrate|TestTargetsFit' ./cmd/dpperf/
# A calibrated target for this host (about two minutes): build/host.yaml.
calibrate: build
	@mkdir -p build
	$(BIN) targets calibrate --model chain --write build/host.yaml
# build/host.yaml scaled by cost group to timed paths of the example
# programs (not the programs `make evidence` bounds): build/host-fit.yaml
# (an upper envelope, for bounds) and build/host-median.yaml (for
# interfaces). The paths are timed twice (build/fit-samples-1.json, -2),
# and both fits take the union: one timing's envelope moved by a third
# from one timing to the next on a two-speed VM (calibrate/method.md).
# map_write is not fitted: no steady path inserts. call is fitted on its
# own: tied to the instruction groups it took their floor, which priced
# the bpf-to-bpf calls of xdp_dispatcher at an eighth of what they cost.
EVIDENCE_EXAMPLES := fig2 parser counter loop call legacy flowtable flowcount flowcount_v2
FIT_OBJS = $(filter-out %/test_xdp_noinline.o %/explode.o %/explode_pairs.o %/explode_far.o $(patsubst %,\%/%.o,$(EVIDENCE_EXAMPLES)),$(wildcard $(BPF_OUT)/*.o))
FIT_GROUPS := alu+branch+memory,call,chain,helper,per_packet
fit: build bpf
	for i in 1 2; do \
	  $(BIN) targets fit --target build/host.yaml --write build/host-fit-$$i.yaml --samples build/fit-samples-$$i.json \
	    --percentile 50 --groups $(FIT_GROUPS) $(FIT_OBJS) > /dev/null || exit 1; \
	done
	$(BIN) targets fit --target build/host.yaml --write build/host-fit.yaml --percentile 50 --groups $(FIT_GROUPS) \
	  --from-samples build/fit-samples-1.json,build/fit-samples-2.json
	$(BIN) targets fit --target build/host.yaml --write build/host-median.yaml --kind median \
	  --groups $(FIT_GROUPS) --from-samples build/fit-samples-1.json,build/fit-samples-2.json
