# parley: build, run locally, test.
#
#   make dev      PostgreSQL + Temporal + MinIO under .dev/, migrations, a dev
#                 API key, then `parley dev` in the foreground (Ctrl-C stops all)
#   make test     go vet, then go test against throwaway services
#                 (narrow with PKG=./api/... TESTFLAGS='-run X -v')
#   make bench    the performance benchmarks (e2e/bench_test.go) against throwaway services
#   make fuzz     every fuzz target for FUZZTIME each (default 2m)
#   make histories  record workflow histories of real end-to-end runs into
#                 workflows/testdata (the replay tests' input)
#   make build    bin/parley
#   make tools    bin/temporal and bin/minio at the pinned versions
#   make clean    build outputs (keeps .dev/); make clean-dev drops .dev/ too

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

GO ?= go

PARLEY_TOOLS_CACHE ?= $(HOME)/.cache/parley/tools
TEMPORAL_CACHE := $(PARLEY_TOOLS_CACHE)/temporal-$(TEMPORAL_VERSION)
MINIO_CACHE    := $(PARLEY_TOOLS_CACHE)/minio-$(MINIO_TAG)

# tool_pin FILE: "module version" of a Go binary, empty when missing.
tool_pin = $(shell $(GO) version -m $(1) 2>/dev/null | awk '$$1 == "mod" { print $$2, $$3 }')

PKG       ?= ./...
TESTFLAGS ?=
BENCHFLAGS ?=
export PKG TESTFLAGS

.PHONY: FORCE all build tools packages dev test vet bench fuzz histories fmt clean clean-dev help

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

FORCE:

packages:
	@scripts/ensure-packages.sh

dev: tools build
	scripts/dev.sh

vet:
	$(GO) vet $(PKG)

test: packages tools
	scripts/test.sh

bench: packages tools
	scripts/with-services.sh $(GO) test -tags integration -run '^$$' -bench . -benchtime 1x -timeout 60m $(BENCHFLAGS) ./e2e/

FUZZTIME ?= 2m

fuzz:
	scripts/fuzz.sh $(FUZZTIME)

# The end-to-end tests whose workflows make the recorded histories: every
# workflow type, succeeding and failing.
HISTORY_TESTS ?= ^(TestTranscriptionEndToEnd|TestTranscriptionFromURL|TestSubtitlesEndToEnd|TestSubtitlesVoiceCleanup|TestWebhookRetriesReplayAndTenancy|TestNotificationChannels|TestSMSSingleSendIsDelivered|TestSMSBatchWithTemplatingCompletes|TestSMSBatchOutcomes|TestSMSThreadConversation|TestVoiceEndToEnd|TestUploadSweepRemovesOnlyOrphans)$$

histories: packages tools
	PARLEY_RECORD_HISTORIES=$(CURDIR)/workflows/testdata scripts/with-services.sh $(GO) test -tags integration -count=1 -timeout 30m -run '$(HISTORY_TESTS)' ./e2e/

fmt:
	$(GO) fmt ./...

clean:
	rm -rf bin coverage.out coverage.html *.coverprofile *.test

clean-dev:
	scripts/services.sh stop .dev
	rm -rf .dev
