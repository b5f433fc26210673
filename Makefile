# Strata — build, run, test.
#   make run    build and start on SQLite (./data), app creation enabled
#   make web    rebuild the web application (web/ → core/webui/dist, committed)
#   make test   every test, on SQLite and (when a server answers) PostgreSQL
#   make bench-load  load benchmark over HTTP, both engines (docs/performance.md)
#   make bench-realtime  live changes: SSE subscribers under a writer, both engines
GO      ?= go
BIN     ?= bin
PLUGINS := $(patsubst plugins/%/main.go,%,$(wildcard plugins/*/main.go))
# Fuzz targets run briefly in every test run, each for a count of inputs
# (about 10 s apiece on the 2-core reference machine). FUZZTIME, a duration or
# a count such as 1000000x, replaces every target's budget.
FUZZTIME ?=

.PHONY: build run web test test-short fuzz bench bench-load bench-realtime lint clean proto

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
# pluginsdk is a module of its own (PLUGINS.md): ./... of the root module
# leaves it out, so it is tested (and vetted, in lint) from its folder.
test:
	$(GO) test -count=1 -p 2 -timeout 30m ./...
	cd pluginsdk && $(GO) test -count=1 -p 2 ./...
	$(MAKE) fuzz

# A short run of every fuzz target (the seed corpus runs in every go test).
# Budgets are counts, not durations: a duration races Go's fuzz coordinator at
# its deadline and fails with a bare "context deadline exceeded" on a loaded
# machine (golang/go#75804); a count has no deadline to race.
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzParseJSON$$' -fuzztime $(or $(FUZZTIME),40000x) ./core/filter/
	$(GO) test -run '^$$' -fuzz '^FuzzParseWhere$$' -fuzztime $(or $(FUZZTIME),30000x) ./core/filter/
	$(GO) test -run '^$$' -fuzz '^FuzzDecode$$' -fuzztime $(or $(FUZZTIME),150000x) ./core/wire/
	$(GO) test -run '^$$' -fuzz '^FuzzRouteBodies$$' -fuzztime $(or $(FUZZTIME),3000x) ./core/server/
	$(GO) test -run '^$$' -fuzz '^FuzzClassify$$' -fuzztime $(or $(FUZZTIME),30000x) ./core/freesql/
	$(GO) test -run '^$$' -fuzz '^FuzzParseRef$$' -fuzztime $(or $(FUZZTIME),20000x) ./plugins/gazetteer/pleiades/
	$(GO) test -run '^$$' -fuzz '^FuzzFilterJSON$$' -fuzztime $(or $(FUZZTIME),20000x) ./core/assemblage/
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(or $(FUZZTIME),20000x) ./core/imports/
	$(GO) test -run '^$$' -fuzz '^FuzzPattern$$' -fuzztime $(or $(FUZZTIME),25000x) ./core/imports/
	$(GO) test -run '^$$' -fuzz '^FuzzAppendString$$' -fuzztime $(or $(FUZZTIME),200000x) ./core/jsonout/
	$(GO) test -run '^$$' -fuzz '^FuzzETagMatches$$' -fuzztime $(or $(FUZZTIME),50000x) ./core/widgets/
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(or $(FUZZTIME),40000x) ./core/geo/
	$(GO) test -run '^$$' -fuzz '^FuzzAppendFloat$$' -fuzztime $(or $(FUZZTIME),400000x) ./core/jsonout/
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(or $(FUZZTIME),200000x) ./core/dbml/
	$(GO) test -run '^$$' -fuzz '^FuzzMarkdownPDF$$' -fuzztime $(or $(FUZZTIME),2000x) ./core/templates/

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
