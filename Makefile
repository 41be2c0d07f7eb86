# parley: build, run locally, test.
#
#   make dev      PostgreSQL + Temporal + MinIO under .dev/, migrations, a dev
#                 API key, then `parley dev` in the foreground (Ctrl-C stops all)
#   make test     go vet, then go test against throwaway services
#                 (narrow with PKG=./api/... TESTFLAGS='-run X -v'); a full
#                 run, or one of ./api/ or ./client/, checks the clients too
#   make check-clients  api/openapi.json through openapi-typescript + tsc
#                 --strict, oapi-codegen and ogen (pinned; fails on any error,
#                 warning or skipped operation)
#   make bench    the performance benchmarks (e2e/bench_test.go) against throwaway services
#   make bench-compare  the benchmarks of REF and of this tree, interleaved, COUNT
#                 runs each, compared by benchstat (REF defaults to the newest
#                 release's commit in CHANGELOG.md; BENCH=regexp, COUNT=5)
#   make fuzz     every fuzz target for FUZZTIME each (default 2m)
#   make histories  record workflow histories of real end-to-end runs into
#                 workflows/testdata (the replay tests' input)
#   make build    bin/parley
#   make tools    bin/temporal and bin/minio at the pinned versions
#   make clean    build outputs (keeps .dev/); make clean-dev drops .dev/ too
#
# Operators (not a set-up command; see the README's "Running it as a cluster"):
#   make cluster  the production topology under .cluster/: Temporal's own server
#                 on PostgreSQL, MinIO erasure-coded over 4 nodes behind nginx,
#                 2 API and 2 worker processes, the stand-ins (in the background)
#   make cluster-stop   stop it (data stays); make cluster-smoke  jobs through it
#   make cluster-tools  bin/temporal-server, bin/temporal-sql-tool, bin/temporal-ui-server
#   make chaos    on the cluster: kill and restart its parts under a mixed workload,
#                 then check nothing was lost or done twice (CHAOSFLAGS='-batch 200')
#   make chaos-short    the same, short, on a scratch cluster removed afterwards (CI)
#   make cluster-bench  throughput on the cluster (1 and 2 workers) and a make dev stack

SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := build
MAKEFLAGS += --no-print-directory

# Pinned tools, built from the Go module proxy. The Temporal CLI stays at v1.5.1:
# v1.6.0 and later carry a replace directive (./cliext) in their go.mod, so
# `go install` from the proxy refuses them; v1.5.1 builds.
TEMPORAL_MODULE  := github.com/temporalio/cli
TEMPORAL_PKG     := $(TEMPORAL_MODULE)/cmd/temporal
TEMPORAL_VERSION := v1.5.1
MINIO_PKG        := github.com/minio/minio
MINIO_VERSION    := v0.0.0-20260212201848-7aac2a2c5b7c
# The pseudo-version's timestamp names MinIO's cache directory.
MINIO_TAG        := $(word 2,$(subst -, ,$(MINIO_VERSION)))
# make cluster: Temporal's own server and its SQL schema tool at the version
# the CLI above embeds (v1.29.1 has no replace directive; v1.32.2 needs a
# newer Go), and the web UI server at the version the CLI embeds.
TEMPORAL_SERVER_MODULE  := go.temporal.io/server
TEMPORAL_SERVER_VERSION := v1.29.1
TEMPORAL_UI_MODULE      := github.com/temporalio/ui-server/v2
TEMPORAL_UI_VERSION     := v2.42.1

GO ?= go

PARLEY_TOOLS_CACHE ?= $(HOME)/.cache/parley/tools
TEMPORAL_CACHE := $(PARLEY_TOOLS_CACHE)/temporal-$(TEMPORAL_VERSION)
MINIO_CACHE    := $(PARLEY_TOOLS_CACHE)/minio-$(MINIO_TAG)
TEMPORAL_SERVER_CACHE := $(PARLEY_TOOLS_CACHE)/temporal-server-$(TEMPORAL_SERVER_VERSION)
TEMPORAL_UI_CACHE     := $(PARLEY_TOOLS_CACHE)/temporal-ui-server-$(TEMPORAL_UI_VERSION)

# tool_pin FILE: "module version" of a Go binary, empty when missing.
tool_pin = $(shell $(GO) version -m $(1) 2>/dev/null | awk '$$1 == "mod" { print $$2, $$3 }')

PKG       ?= ./...
TESTFLAGS ?=
BENCHFLAGS ?=
export PKG TESTFLAGS

.PHONY: FORCE all build tools packages dev test check-clients vet bench fuzz histories fmt clean clean-dev help \
	bench-compare cluster cluster-stop cluster-smoke cluster-tools chaos chaos-short cluster-bench

all: build

help:
	@sed -n 's/^#   //p' $(firstword $(MAKEFILE_LIST))

# parley links libpocketsphinx with cgo: packages installs its headers.
build: packages
	$(GO) build -buildvcs=auto -o bin/parley ./cmd/parley

tools: bin/temporal bin/minio

# File targets: nothing to do while the binary is there and built from the
# pinned module version; otherwise copied from the cache (built into it first
# if need be).
ifneq ($(call tool_pin,bin/temporal),$(TEMPORAL_MODULE) $(TEMPORAL_VERSION))
bin/temporal: FORCE
endif
ifneq ($(call tool_pin,bin/minio),$(MINIO_PKG) $(MINIO_VERSION))
bin/minio: FORCE
endif

bin/temporal:
	scripts/install-tool.sh temporal $(TEMPORAL_PKG) $(TEMPORAL_VERSION) "$(TEMPORAL_CACHE)" $@

bin/minio:
	scripts/install-tool.sh minio $(MINIO_PKG) $(MINIO_VERSION) "$(MINIO_CACHE)" $@

cluster-tools: bin/temporal-server bin/temporal-sql-tool bin/temporal-ui-server

ifneq ($(call tool_pin,bin/temporal-server),$(TEMPORAL_SERVER_MODULE) $(TEMPORAL_SERVER_VERSION))
bin/temporal-server: FORCE
endif
ifneq ($(call tool_pin,bin/temporal-sql-tool),$(TEMPORAL_SERVER_MODULE) $(TEMPORAL_SERVER_VERSION))
bin/temporal-sql-tool: FORCE
endif
ifneq ($(call tool_pin,bin/temporal-ui-server),$(TEMPORAL_UI_MODULE) $(TEMPORAL_UI_VERSION))
bin/temporal-ui-server: FORCE
endif

# `go install` names each binary after its package (server, sql, server):
# install-tool.sh takes that name, the copy in bin/ gets ours.
bin/temporal-server:
	scripts/install-tool.sh server $(TEMPORAL_SERVER_MODULE)/cmd/server $(TEMPORAL_SERVER_VERSION) "$(TEMPORAL_SERVER_CACHE)" $@

bin/temporal-sql-tool:
	scripts/install-tool.sh sql $(TEMPORAL_SERVER_MODULE)/cmd/tools/sql $(TEMPORAL_SERVER_VERSION) "$(TEMPORAL_SERVER_CACHE)" $@

bin/temporal-ui-server:
	scripts/install-tool.sh server $(TEMPORAL_UI_MODULE)/cmd/server $(TEMPORAL_UI_VERSION) "$(TEMPORAL_UI_CACHE)" $@

FORCE:

packages:
	@scripts/ensure-packages.sh

dev: tools build
	scripts/dev.sh

cluster: packages tools cluster-tools build
	scripts/cluster.sh up

cluster-stop:
	scripts/cluster.sh down

cluster-smoke:
	scripts/cluster-smoke.sh

# make chaos: faults injected into the cluster under a mixed workload
# (cmd/chaos). Its processes need webhooks to a loopback receiver and short
# chunks (a 40 s recording is split); the run restarts them with these. MinIO
# expires incomplete uploads after 2 minutes (checked every minute), so the
# run sees the upload its killed API process cut off go within -upload-cleanup;
# unsettled SMS are asked of the carrier every 30 s (callbacks lost while the
# API or PostgreSQL restarts are caught up by that refresh; default 5 min).
CHAOS_ENV   ?= PARLEY_URL_ALLOW_CIDRS=127.0.0.1/32 PARLEY_SPLIT_ABOVE=30s PARLEY_CHUNK_LENGTH=15s \
               PARLEY_CLUSTER_STALE_UPLOADS_EXPIRY=2m PARLEY_CLUSTER_STALE_UPLOADS_CLEANUP=1m \
               PARLEY_SMS_REFRESH_INTERVAL=30s
CHAOS_UPLOAD_CLEANUP ?= 4m
CHAOSFLAGS  ?=

chaos: packages tools cluster-tools build
	$(CHAOS_ENV) scripts/cluster.sh up
	$(GO) run ./cmd/chaos -upload-cleanup $(CHAOS_UPLOAD_CLEANUP) $(CHAOSFLAGS)

# make chaos-short: the same on a fresh cluster in a scratch directory, with a
# 200-recipient batch, removed afterwards (about 6 minutes after the tools are
# built; for CI: scripts/cluster-chaos-short.sh).
chaos-short: packages tools cluster-tools build
	scripts/cluster-chaos-short.sh $(CHAOSFLAGS)

# make cluster-bench: transcription and SMS throughput on the cluster with one
# and two worker processes, then on a make dev-shaped stack (docs/capacity.md).
# The cluster's env is rewritten with the defaults (none of CHAOS_ENV).
cluster-bench: packages tools cluster-tools build
	scripts/cluster.sh up
	$(GO) run ./cmd/chaos bench $(BENCHFLAGS)

vet:
	$(GO) vet $(PKG)

test: packages tools
	scripts/test.sh

check-clients:
	scripts/check-clients.sh

bench: packages tools
	scripts/with-services.sh $(GO) test -tags integration -run '^$$' -bench . -benchtime 1x -timeout 60m $(BENCHFLAGS) ./e2e/

# REF, BENCH and COUNT pass to the script through the environment; empty
# ones take its defaults.
bench-compare: packages tools
	REF='$(REF)' BENCH='$(BENCH)' COUNT='$(COUNT)' scripts/bench-compare.sh

FUZZTIME ?= 2m

fuzz:
	scripts/fuzz.sh $(FUZZTIME)

# The end-to-end tests whose workflows make the recorded histories: every
# workflow type, succeeding and failing.
HISTORY_TESTS ?= ^(TestTranscriptionEndToEnd|TestTranscriptionFromURL|TestSubtitlesEndToEnd|TestSubtitlesVoiceCleanup|TestWebhookRetriesReplayAndTenancy|TestNotificationChannels|TestSMSSingleSendIsDelivered|TestSMSBatchWithTemplatingCompletes|TestSMSBatchOutcomes|TestSMSThreadConversation|TestSMSOptOutRefusesSendsAndRecords21610|TestSMSOptOutsAPI|TestVoiceEndToEnd|TestUploadSweepRemovesOnlyOrphans)$$

histories: packages tools
	PARLEY_RECORD_HISTORIES=$(CURDIR)/workflows/testdata scripts/with-services.sh $(GO) test -tags integration -count=1 -timeout 30m -run '$(HISTORY_TESTS)' ./e2e/

fmt:
	$(GO) fmt ./...

clean:
	rm -rf bin coverage.out coverage.html *.coverprofile *.test

clean-dev:
	scripts/services.sh stop .dev
	rm -rf .dev
