# Strata — build, run, test.
#   make run    build and start on SQLite (./data), app creation enabled
#   make web    rebuild the web application (web/ → core/webui/dist, committed)
#   make test   every test, on SQLite and (when a server answers) PostgreSQL
#   make bench-load  load benchmark over HTTP, both engines (docs/performance.md)
#   make bench-realtime  live changes: SSE subscribers under a writer, both engines
#   make bench-sync      offline sync's pull: first pull of 100,000 rows, incremental pulls, both engines
GO      ?= go
BIN     ?= bin
PLUGINS := $(patsubst plugins/%/main.go,%,$(wildcard plugins/*/main.go))
# Fuzz targets run briefly in every test run, each for a count of inputs
# (.ci/fuzz). FUZZTIME, a duration or a count such as 1000000x, replaces
# every target's budget.
FUZZTIME ?=

.PHONY: build run web test test-grouped test-short fuzz bench bench-load bench-realtime bench-sync lint clean proto

# A cold build fetches and compiles every dependency first (minutes on two
# cores, silent otherwise): say so, then name each binary as it is built.
build:
	@if [ ! -x $(BIN)/strata ]; then echo "first build: Go downloads and compiles the dependencies once (a few minutes on 2 cores; later builds take seconds)"; fi
	@echo "building $(BIN)/strata (the server and its web application)"
	$(GO) build -o $(BIN)/strata ./cmd/strata
	@mkdir -p $(BIN)/plugins
	@for p in $(PLUGINS); do echo "building plugin $$p"; $(GO) build -o $(BIN)/plugins/$$p ./plugins/$$p || exit 1; done
	@# The server refuses a plugin whose SHA-256 is not the recorded one; these
	@# were just built from this tree: check them and record theirs.
	@./$(BIN)/strata plugin trust $(addprefix $(BIN)/plugins/,$(PLUGINS)) --plugin-dir $(BIN)/plugins >/dev/null

run: build
	SERVICE_ALLOW_NEW_APP=$${SERVICE_ALLOW_NEW_APP:-1} ./$(BIN)/strata serve --demo

# The web application's build is committed (core/webui/dist) and embedded
# with go:embed, so build and run need no npm; after changing web/, rebuild
# it here and commit both. The lockfile pins every package.
web:
	cd web && npm ci --no-audit --no-fund && npm run build

# -p 2: the reference machine has two cores; packages share one PostgreSQL.
# The two longest packages are named first, as go test starts packages in
# the order given: the browser scenarios (11 to 25 minutes for both
# engines on the loaded 2-core machine) and core/server (5 to 8). In
# their places (59th and 52nd of 76) they started about 6 minutes in and
# ran on after everything else; first, the others run beside them.
# pluginsdk is a module of its own (PLUGINS.md): ./... of the root module
# leaves it out, so it is tested (and vetted, in lint) from its folder.
test:
	$(GO) test -count=1 -p 2 -timeout 40m ./core/webui/browsertest/ ./core/server/ ./...
	cd pluginsdk && $(GO) test -count=1 -p 2 ./...
	$(MAKE) test-grouped
	$(MAKE) fuzz

# The records and plugin suites again with SQLite's group commit forced on
# (every transaction in a savepoint of a group) and off (one transaction
# each); the main pass runs with it on, as served. SQLite only: PostgreSQL
# does not group.
GROUPED_SERVER = ^Test(Record|SelfWriter|ListPaging|Duplicate|AnotherApps|CheckPlugins|Versions|EditHistory|Batch|PluginRow|SavesOnAssumed|SaveRoundTrips|RowSubsets|TablePrivilege|Strict|GroupedSaves)
GROUPED_PLUGINS = Hook|Save|Batch|HostUpdate|HostQuery|Unchecked|RealPlugin(Chronology|Radiocarbon|Osteology|Sequence)|Dendro|WritesReach
test-grouped:
	for mode in force off; do \
		STRATA_GROUP_COMMIT=$$mode STRATA_TEST_ENGINES=sqlite $(GO) test -count=1 -p 2 ./core/records/ ./core/batch/ ./core/changes/ ./core/realtime/ ./core/store/ && \
		STRATA_GROUP_COMMIT=$$mode STRATA_TEST_ENGINES=sqlite $(GO) test -count=1 -p 2 -run '$(GROUPED_SERVER)' ./core/server/ && \
		STRATA_GROUP_COMMIT=$$mode STRATA_TEST_ENGINES=sqlite $(GO) test -count=1 -p 2 -run '$(GROUPED_PLUGINS)' ./core/pluginhost/... || exit 1; \
	done

# A short run of every fuzz target (the seed corpus runs in every go test):
# .ci/fuzz lists the targets and their budgets, and builds each package's
# instrumented test binary once for all its targets. FUZZTIME replaces
# every budget.
fuzz:
	GO=$(GO) FUZZTIME=$(FUZZTIME) .ci/fuzz

test-short:
	$(GO) test -short -count=1 ./...
	cd pluginsdk && $(GO) test -short -count=1 ./...

bench:
	@echo "cores: $$(nproc)"
	$(GO) test -run '^$$' -bench . -benchmem -p 1 ./...
	cd pluginsdk && $(GO) test -run '^$$' -bench . -benchmem -p 1 ./...

# The load benchmark over HTTP (cmd/strata-bench): a Strata server on each
# engine, 10,000, 100,000 and 1,000,000 rows, 16 clients, 10 s per operation.
# ENGINES, ROWS, DURATION, CLIENTS, OUT: see cmd/strata-bench/bench-load.sh.
bench-load: build
	$(GO) build -o $(BIN)/strata-bench ./cmd/strata-bench
	BIN=$(BIN) bash cmd/strata-bench/bench-load.sh

# Live changes (cmd/strata-bench -realtime): SUBSCRIBERS streams on one app
# under a writer at RATE writes/s for DURATION, against the same writer alone;
# delivery latency, write rate, server goroutines and memory. ENGINES,
# SUBSCRIBERS, RATE, DURATION: see cmd/strata-bench/bench-realtime.sh.
bench-realtime: build
	$(GO) build -o $(BIN)/strata-bench ./cmd/strata-bench
	BIN=$(BIN) bash cmd/strata-bench/bench-realtime.sh

# ROWS, LIMIT, ROUNDS, CHANGES: see cmd/strata-bench/bench-sync.sh.
bench-sync: build
	$(GO) build -o $(BIN)/strata-bench ./cmd/strata-bench
	BIN=$(BIN) bash cmd/strata-bench/bench-sync.sh

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	cd pluginsdk && $(GO) vet ./...

# Regenerates the plugin protocol's Go code (committed) from plugin.proto:
# protoc with protoc-gen-go and protoc-gen-go-grpc, taken from GOPATH/bin.
proto:
	protoc --proto_path=pluginsdk/proto/v1 \
		--go_out=pluginsdk/proto/v1 --go_opt=paths=source_relative \
		--go-grpc_out=pluginsdk/proto/v1 --go-grpc_opt=paths=source_relative \
		--plugin=protoc-gen-go=$(shell $(GO) env GOPATH)/bin/protoc-gen-go \
		--plugin=protoc-gen-go-grpc=$(shell $(GO) env GOPATH)/bin/protoc-gen-go-grpc \
		plugin.proto

clean:
	rm -rf $(BIN)
