# posflow.mk - build a training dataset from games with make: split the
# games into chunks, run every configured stage per chunk, shard them all.
#
#   make -f posflow.mk GAMES='a.pgn.zst b.pgn.zst' OUT=out DEPTH=12 \
#       [CHUNK=100000] [FILTER='ply >= 16 && !capture'] [MULTIPV=all] \
#       [SHARDS='--split train=0.95,val=0.05'] ... -j N
#
# Installed as PREFIX/share/posflow/posflow.mk; from the source tree add
# BIN=build/bin (or put the tools on PATH).
#
# Stages, each to its own directory under OUT, one file per chunk:
#   chunks/      pgn2pos --chunks CHUNK: the positions of every CHUNK
#                games, in one pass over GAMES (PGN2POS: more options)
#   filtered/    posfilter FILTER with SAMPLE's rules (off when both are
#                empty)
#   evaluated/   uci-eval at DEPTH (or NODES) with MULTIPV, KEEP_DEPTHS,
#                TAIL, ENGINE and UCI's options, one engine per chunk and
#                a cache file per chunk under cache/ (off when DEPTH and
#                NODES are empty); with SHALLOW=d, a depth-d evaluation
#                first (the shallow one repair-mark's candidates and
#                complexity's nodes mode compare with)
#   targets/     softtarget TARGETS (after an evaluation; TARGETS=no: off)
#   complexity/  complexity COMPLEXITY's options (COMPLEXITY=yes: defaults;
#                needs MULTIPV=all KEEP_DEPTHS=yes)
#   repaired/    repair-mark --mode REPAIR (candidates or panda, with
#                ENGINE, HASH and UCI for panda's searches, SEED for its
#                draws)
#   pqr/         pqr-sample with PQR triples per position
# then shards/ (shard SHARDS over every chunk's last file, in chunk order).
#
# Every file is written under a temporary name (.part) and renamed when
# complete, so a build killed at any point and run again keeps every
# finished file, never takes a half-written one for finished, and the
# evaluation cache makes a half-done chunk cheap.  The same GAMES and
# settings give the same records in the same shards whatever -j, however
# often the build was interrupted, and wherever a chunk ran (evaluations at
# a depth or nodes limit are deterministic per game with one thread).
# Each stage keeps the settings it was made with in OUT/<stage>/.settings
# (its own variables and those of the stages before it; without ENGINE,
# the engine named by POSFLOW_ENGINE when set): a build with other
# settings into the same OUT makes again the stages they touch, and only
# those (change TARGETS, and the evaluations stay; the evaluation caches
# are kept whatever changes).  The engine's file, its size and time, is
# a setting of the stages that search (ENGINE_FILE below): an engine
# upgraded in place makes them again.  The size and modification time
# of each GAMES file are among the split's settings: a file changed (a
# download completed, games added) makes every stage again.  A word of GAMES with
# a wildcard (GAMES='lichess_2025-0*.pgn.zst') stands for the files the
# shell expands it to, and their names are among the settings too:
# a file more or less matched makes every stage again.  The games are
# looked at when the split is asked for (all, chunks, stages): one and
# shards, the cluster jobs, take the split as it was made, so that games
# changed while a cluster build runs do not have one job remove the
# chunks of the others.  Settings that cannot be recorded (a full disk,
# OUT not writable) stop make before anything runs, rather than leave
# files made with other settings in place.
#
# Settings that cannot work are refused before anything runs: OUT or BIN
# with blanks or characters special to the shell or to make, DEPTH and
# NODES both, TAIL without DEPTH or NODES or with MULTIPV=all, KEEP_DEPTHS
# other than yes or no, REPAIR other than candidates or panda, COMPLEXITY
# or REPAIR without DEPTH or NODES, COMPLEXITY without MULTIPV=all
# KEEP_DEPTHS=yes (or in nodes mode without SHALLOW), REPAIR=candidates
# without SHALLOW.
#
# GAMES holds make's words: a file name may hold any character but a
# blank (a '$' written '$$', as everywhere in make); give a directory for
# files with blanks in their names.
#
# Variables: GAMES (required), OUT (out), CHUNK (100000), PGN2POS, FILTER,
# SAMPLE, SEED (1: posfilter with SAMPLE, REPAIR=panda's maybe draws,
# pqr-sample, shard), DEPTH, NODES, SHALLOW, MULTIPV (1), KEEP_DEPTHS
# (yes/no), TAIL (a --tail-depth, or with NODES a --tail-nodes, for
# MULTIPV=N), ENGINE, HASH (16), UCI, TARGETS, COMPLEXITY, REPAIR, PQR,
# SHARDS, BIN.
#
# Targets: all (the default: the shards), chunks (the split alone),
# stages (every chunk through its last stage, no shards), one C=NAME (chunk
# NAME, as chunk-000003.pos.zst, through its last stage: what a cluster
# job runs), shards (after every chunk is through), list-chunks and
# last-dir (print the chunk names after the split, and the directory of
# each chunk's last file), clean.

# This makefile, for the second makes (all, stages, one).  make keeps the
# names of the makefiles read as words: a path with blanks (a checkout
# under "My Projects") is split.  The longest run of the last words that
# names a file is this one.
SELF := $(shell set -- $(foreach w,$(MAKEFILE_LIST),'$(subst ','\'',$(w))'); \
	while [ $$# -gt 0 ]; do [ -f "$$*" ] && { printf '%s\n' "$$*"; \
	exit 0; }; shift; done)
SELF := $(or $(SELF),$(lastword $(MAKEFILE_LIST)))

GAMES ?=
OUT ?= out
CHUNK ?= 100000
PGN2POS ?=
FILTER ?=
SAMPLE ?=
SEED ?= 1
DEPTH ?=
NODES ?=
SHALLOW ?=
MULTIPV ?= 1
KEEP_DEPTHS ?= no
TAIL ?=
ENGINE ?=
HASH ?= 16
UCI ?=
TARGETS ?=
COMPLEXITY ?=
REPAIR ?=
PQR ?=
SHARDS ?= --split train=0.9,val=0.1
BIN ?=

# A stage that pipes two tools fails when either does.
SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -c
.DELETE_ON_ERROR:
.SUFFIXES:
.SECONDARY:

# A word in single quotes for the shell.
q = '$(subst ','\'',$(1))'
tool = $(if $(BIN),$(BIN)/)$(1)

# (make clean needs no games.)
ifeq ($(strip $(GAMES)),)
ifneq ($(filter-out clean,$(or $(MAKECMDGOALS),all)),)
$(error posflow.mk: give GAMES='file ...' (see the head of $(SELF)))
endif
endif
# Settings checked before anything runs.  make cannot take a name with
# blanks for a target: OUT and BIN must be one word each.
ifneq ($(words $(OUT)),1)
$(error posflow.mk: OUT='$(OUT)': give one directory name, without blanks)
endif
ifneq ($(words $(BIN)),$(if $(strip $(BIN)),1,0))
$(error posflow.mk: BIN='$(BIN)': give one directory name, without blanks)
endif
# OUT and BIN go into the recipes unquoted, OUT into make's targets and
# patterns too: a character special to the shell or to make in them is
# refused (OUT='a;b' would run 'b/chunks...', rm -rf included).
special := ' " ` $$ \ ; & | ( ) < > * ? [ ] { } ! \# % : =
ifneq ($(strip $(foreach c,$(special),$(findstring $(c),$(OUT)))),)
$(error posflow.mk: OUT='$(OUT)': give a directory name without any of \
	$(special))
endif
ifneq ($(strip $(foreach c,$(special),$(findstring $(c),$(BIN)))),)
$(error posflow.mk: BIN='$(BIN)': give a directory name without any of \
	$(special))
endif
ifeq ($(filter-out yes no,$(KEEP_DEPTHS))$(words $(KEEP_DEPTHS)),1)
else
$(error posflow.mk: KEEP_DEPTHS='$(KEEP_DEPTHS)': yes or no)
endif
ifneq ($(strip $(REPAIR)),)
ifeq ($(filter candidates panda,$(REPAIR))$(words $(REPAIR)),$(strip \
	$(REPAIR))1)
else
$(error posflow.mk: REPAIR='$(REPAIR)': candidates or panda)
endif
endif
ifneq ($(strip $(DEPTH)),)
ifneq ($(strip $(NODES)),)
$(error posflow.mk: DEPTH='$(DEPTH)' NODES='$(NODES)': give one search limit, \
	DEPTH or NODES)
endif
endif
# uci-eval's tail: the moves beyond the MULTIPV best
ifneq ($(strip $(TAIL)),)
ifeq ($(strip $(DEPTH)$(NODES)),)
$(error posflow.mk: TAIL needs an evaluation: give DEPTH or NODES)
endif
ifeq ($(strip $(MULTIPV)),all)
$(error posflow.mk: TAIL scores the moves beyond MULTIPV's count: give \
	MULTIPV=N, not all)
endif
endif
ifneq ($(strip $(COMPLEXITY)$(REPAIR)),)
ifeq ($(strip $(DEPTH)$(NODES)),)
$(error posflow.mk: COMPLEXITY and REPAIR need an evaluation: give \
	DEPTH or NODES)
endif
endif
# complexity's depth mode reads every move's score at every depth; its
# nodes mode and repair-mark's candidates compare two evaluations
ifneq ($(strip $(COMPLEXITY)),)
ifneq ($(filter nodes --mode=nodes,$(COMPLEXITY)),)
ifeq ($(strip $(SHALLOW)),)
$(error posflow.mk: COMPLEXITY in nodes mode compares two evaluations: \
	give SHALLOW)
endif
else ifneq ($(MULTIPV) $(KEEP_DEPTHS),all yes)
$(error posflow.mk: COMPLEXITY needs MULTIPV=all KEEP_DEPTHS=yes (or \
	--mode nodes with SHALLOW))
endif
endif
ifeq ($(strip $(REPAIR)),candidates)
ifeq ($(strip $(SHALLOW)),)
$(error posflow.mk: REPAIR=candidates compares two evaluations: give SHALLOW)
endif
endif

# The stages in use, in order.
STAGES := chunks
ifneq ($(strip $(FILTER)$(SAMPLE)),)
STAGES += filtered
endif
ifneq ($(strip $(DEPTH)$(NODES)),)
STAGES += evaluated
ifneq ($(strip $(TARGETS)),no)
STAGES += targets
endif
endif
ifneq ($(strip $(COMPLEXITY)),)
STAGES += complexity
endif
ifneq ($(strip $(REPAIR)),)
STAGES += repaired
endif
ifneq ($(strip $(PQR)),)
STAGES += pqr
endif
LAST := $(lastword $(STAGES))
# The stages up to and with stage $(1).
_upto = $(firstword $(2))$(if $(filter $(1),$(firstword $(2))),, $(call \
	_upto,$(1),$(wordlist 2,99,$(2))))
upto = $(call _upto,$(1),$(STAGES))

LIMIT := $(if $(strip $(DEPTH)),-d $(DEPTH),-n $(NODES))

# Each stage's command, reading $< and writing $@.part.
cmd_filtered = $(call tool,posfilter) --seed $(SEED) $(SAMPLE) \
	-e $(call q,$(FILTER)) -z -o $@.part $<
cmd_evaluated = $(if $(strip $(SHALLOW)),$(call tool,uci-eval) -d $(SHALLOW) \
	$(if $(strip $(ENGINE)),-e $(call q,$(ENGINE))) -O Hash=$(HASH) \
	$(UCI) -j 1 --reproducible --cache $(OUT)/cache/$*.shallow.cache $< |) \
	$(call tool,uci-eval) $(LIMIT) -m $(MULTIPV) \
	$(if $(filter yes,$(KEEP_DEPTHS)),--keep-depths) \
	$(if $(strip $(TAIL)),$(if $(strip $(DEPTH)),--tail-depth,--tail-nodes) \
	$(TAIL)) \
	$(if $(strip $(ENGINE)),-e $(call q,$(ENGINE))) -O Hash=$(HASH) \
	$(UCI) -j 1 --reproducible --cache $(OUT)/cache/$*.cache -z -o $@.part \
	$(if $(strip $(SHALLOW)),-,$<)
cmd_targets = $(call tool,softtarget) $(TARGETS) -z -o $@.part $<
cmd_complexity = $(call tool,complexity) $(filter-out yes,$(COMPLEXITY)) \
	-z -o $@.part $<
cmd_repaired = $(call tool,repair-mark) --mode $(REPAIR) \
	$(if $(filter panda,$(REPAIR)),--seed $(SEED) -O Hash=$(HASH) $(UCI)) \
	$(if $(strip $(ENGINE)),-e $(call q,$(ENGINE))) -z -o $@.part $<
cmd_pqr = $(call tool,pqr-sample) --per-position $(PQR) --seed $(SEED) \
	-z -o $@.part $<

# The variables each stage's files depend on (besides those of the stages
# before it).  GAMES_FILES: the size and modification time of each GAMES
# file (and the name of each file under a GAMES directory, and of each
# file a wildcard in GAMES matched), so that a file changed under the
# same name, or added, removed or renamed in a directory or among a
# wildcard's matches, is split again.  Where a file cannot be seen (a
# cluster node without the games, which runs only later stages) the
# split's recorded value stands: no change.
#
# GAMES_SH: GAMES for the shell, each word quoted but those holding a
# wildcard (*, ?, [), which the shell expands (in the recipe too, so that
# a wildcard matching thousands of files makes no command line too long
# for the shell).
glob_word = $(findstring *,$(1))$(findstring ?,$(1))$(findstring [,$(1))
GAMES_GLOBS := $(strip $(foreach g,$(GAMES),$(if $(call glob_word,$(g)),$(g))))
GAMES_SH := $(foreach g,$(GAMES),$(if $(call glob_word,$(g)),$(g),$(call q,$(g))))
#
# A make that runs only later stages (one: a cluster task; shards: the
# shard job, or the second make of all; the queries) takes the split's
# recorded value without looking at the games: a games file changed while
# the tasks of a build run (a download into a GAMES directory) must not
# have one task remove the split, and every stage's files, under the
# others.  The next make (all, chunks, stages) or submission splits again.
GAMES_RECORDED := $(shell sed -n 's/^GAMES_FILES=//p' \
	$(OUT)/chunks/.settings 2>/dev/null)
LATER_ONLY := $(if $(filter-out one shards stages-after-split list-chunks \
	last-dir,$(or $(MAKECMDGOALS),all)),,yes)
# Under a directory, names that begin with a dot are left out, as
# pgn2pos leaves them out (an rsync temporary file, .git).
# A value longer than 4096 bytes (a GAMES directory of thousands of
# files) is kept as its checksum, so that the settings stay short enough
# for a command line.
GAMES_FILES := $(if $(and $(LATER_ONLY),$(GAMES_RECORDED)),$(GAMES_RECORDED),$(shell \
	s=$$($(if $(GAMES_GLOBS),printf '%s\n' $(GAMES_SH) &&) \
	for f in $(GAMES_SH); \
	do [ -e "$$f" ] && find -L "$$f" -type f -printf '%P@%s@%T@\n' | \
	grep -v -e '^\.' -e '/\.' | sort \
	|| exit 1; done) && s=$$(echo $$s) && if [ $${#s} -le 4096 ]; then \
	printf '%s\n' "$$s"; else printf 'cksum %s\n' "$$(printf '%s' "$$s" | \
	cksum)"; fi || printf '%s\n' $(call q,$(GAMES_RECORDED))))
# The engine's file as uci-eval finds it (ENGINE, else $$POSFLOW_ENGINE,
# else stockfish on PATH, else /usr/games/stockfish), with its size and
# time: among the settings of the stages that search, so that an engine
# upgraded in place (apt upgrade) makes them again rather than leave
# evaluations of two engines side by side.  The later-only makes (the
# cluster jobs) take the recorded one, as they take the split's: a node
# whose copy differs removes nothing under the others.  Left out when no
# file is found (the searches fail then anyway).  A network UCI names (-O
# EvalFile=my.nnue, as uci-eval's cache knows it: an option whose name
# holds evalfile, weights or nnue) is part of the engine the same way.
ENGINE_RECORDED := $(shell sed -n 's/^ENGINE_FILE=//p' \
	$(OUT)/evaluated/.settings 2>/dev/null)
ENGINE_FILE := $(if $(LATER_ONLY),$(ENGINE_RECORDED),$(shell \
	e=$(call q,$(or $(strip $(ENGINE)),$(POSFLOW_ENGINE))); \
	[ -n "$$e" ] || e=$$(command -v stockfish) || e=/usr/games/stockfish; \
	p=$$(command -v -- "$$e") && find -L "$$p" -maxdepth 0 -type f \
	-printf '%p@%s@%T@\n' 2>/dev/null; set -- $(UCI); for w; do \
	case $$(printf '%s' "$${w%%=*}" | tr A-Z a-z) in \
	(*evalfile*|*weights*|*nnue*) [ "$$w" != "$${w#*=}" ] && \
	[ -f "$${w#*=}" ] && find -L "$${w#*=}" -maxdepth 0 \
	-printf '%p@%s@%T@\n' 2>/dev/null;; esac; done))
engine_file := $(if $(strip $(ENGINE_FILE)),ENGINE_FILE)
VARS_chunks := GAMES GAMES_FILES CHUNK PGN2POS
VARS_filtered := FILTER SAMPLE $(if $(strip $(SAMPLE)),SEED)
# Without ENGINE the tools run $$POSFLOW_ENGINE (when set; else stockfish
# on PATH): a setting too.
engine_env := $(if $(strip $(ENGINE)),,$(if $(strip \
	$(POSFLOW_ENGINE)),POSFLOW_ENGINE))
VARS_evaluated := DEPTH NODES SHALLOW MULTIPV KEEP_DEPTHS TAIL ENGINE HASH UCI \
	$(engine_env) $(engine_file)
VARS_targets := TARGETS
VARS_complexity := COMPLEXITY
VARS_repaired := REPAIR ENGINE $(engine_env) $(if $(filter \
	panda,$(REPAIR)),SEED HASH UCI $(engine_file))
VARS_pqr := PQR SEED
VARS_shards := SHARDS SEED

.PHONY: all chunks stages shards clean one list-chunks last-dir

all: $(OUT)/chunks/.done
	@$(MAKE) -f $(call q,$(SELF)) --no-print-directory SUB_MAKE=yes shards

chunks: $(OUT)/chunks/.done

stages: $(OUT)/chunks/.done
	@$(MAKE) -f $(call q,$(SELF)) --no-print-directory SUB_MAKE=yes \
	    stages-after-split

# A stage's settings, checked when this makefile is read, before make
# looks at any file: rewritten, and the stage's files removed so that they
# are made again, only when they differ from those the stage was made
# with.  (Done at read time, not in a recipe, so that make never takes a
# file for up to date and then sees it removed.)  The file is only ever
# replaced whole (mv), and not written at all when the settings are the
# same, so makes that read this at the same time (cluster jobs on one
# OUT) agree.  Settings recorded before the engine's file was among them
# (ENGINE_FILE) and otherwise the same are taken for this engine's: the
# line is added, nothing removed.  settings_check, stage, the stages up
# to it, what to remove on a change.  Under make -n nothing is written or removed: a changed
# stage is only named (and make -n, seeing its old files, does not list
# their making).  A check that fails (the new settings cannot be written
# or the old files cannot be removed: a full disk, a directory not
# writable) stops make before anything runs, since the files made with
# the old settings would be taken for up to date.
define settings_check
$(shell set -- $(call q,STAGES=$(2)) \
    $(foreach s,$(2),$(foreach v,$(VARS_$(s)),$(call q,$(v)=$($(v))))); \
    f=$(OUT)/$(1)/.settings; \
    if [ -f $$f ] && printf '%s\n' "$$@" | cmp -s $$f -; then \
	:; \
    elif [ -f $$f ] && ! grep -q '^ENGINE_FILE=' $$f && \
	printf '%s\n' "$$@" | grep -v '^ENGINE_FILE=' | cmp -s $$f -; then \
	[ -n "$(DRY_RUN)" ] || { printf '%s\n' "$$@" > $$f.new.$$$$ && \
	mv $$f.new.$$$$ $$f; } || { rm -f $$f.new.$$$$; exit 1; }; \
    elif [ -n "$(DRY_RUN)" ]; then \
	if [ -f $$f ] && [ -z "$(SUB_MAKE)" ]; then \
		echo "posflow.mk: $(1): the settings changed; its files" \
		    "would be made again (make -n: nothing removed)" >&2; \
	fi; \
    else \
	( mkdir -p $(OUT)/$(1) && printf '%s\n' "$$@" > $$f.new.$$$$ && \
	if [ -f $$f ]; then \
		echo "posflow.mk: $(1): the settings changed; its files are" \
		    "made again" >&2; \
		rm -rf $(3); \
	fi && \
	mv $$f.new.$$$$ $$f ) || { rm -f $$f.new.$$$$; exit 1; }; \
    fi && echo ok)
endef
# The check, stopping make unless it printed ok (a write that failed, or
# was killed by a file size limit in its subshell, a shell that could not
# be run: no ok).
settings_check_or_stop = $(if $(filter ok,$(call \
    settings_check,$(1),$(2),$(3))),,$(error \
    posflow.mk: $(OUT)/$(1): cannot record the stage's settings or remove \
    its old files (a full disk? a directory not writable?): stopped, so \
    that no file made with other settings is taken for up to date))
# make -n (--dry-run, --just-print, --recon): n among the one-letter flags.
# SUB_MAKE: set on the second makes, which make -n runs too (a $(MAKE)
# line): the first has named the changed stages already.
DRY_RUN := $(findstring n,$(firstword -$(MAKEFLAGS)))
ifeq ($(filter clean,$(MAKECMDGOALS)),)
$(call settings_check_or_stop,chunks,chunks,$(OUT)/chunks/chunk-* \
	$(OUT)/chunks/.chunk-* $(OUT)/chunks/.done)
$(foreach st,$(wordlist 2,99,$(STAGES)),$(call settings_check_or_stop,$(st),$(call \
	upto,$(st)),$(OUT)/$(st)/chunk-*))
$(call settings_check_or_stop,shards,$(STAGES) shards,$(OUT)/shards/*)
endif

# The split: pgn2pos writes each chunk under a temporary name and skips
# the chunks already there, so a rerun writes only the missing ones.
$(OUT)/chunks/.done:
	$(call tool,pgn2pos) --chunks $(CHUNK) -z $(PGN2POS) \
		-o $(OUT)/chunks $(GAMES_SH)
	@touch $@

# After the split (a second make, which sees the chunk files).
CHUNK_FILES := $(sort $(wildcard $(OUT)/chunks/chunk-*.pos.zst))
FINAL := $(patsubst $(OUT)/chunks/%,$(OUT)/$(LAST)/%,$(CHUNK_FILES))

define stage_rule
$$(OUT)/$(2)/%.pos.zst: $$(OUT)/$(1)/%.pos.zst
	@mkdir -p $$(@D) $$(OUT)/cache
	$$(cmd_$(2)) || { rm -f $$@.part; exit 1; }
	@mv $$@.part $$@
endef
# One rule per pair of consecutive stages ("chunks:filtered", ...).
PAIRS := $(join $(addsuffix :,$(wordlist 1,$(words $(STAGES)),x $(STAGES))),$(STAGES))
$(foreach p,$(wordlist 2,99,$(PAIRS)),$(eval $(call stage_rule,$(word \
	1,$(subst :, ,$(p))),$(word 2,$(subst :, ,$(p))))))

.PHONY: stages-after-split
stages-after-split: $(FINAL)

# One chunk through its stages (the split must be there).
one:
	@test -n "$(C)" || { echo "posflow.mk: one needs C=chunk-NNNNNN.pos.zst" >&2; exit 1; }
	@test -f $(OUT)/chunks/$(C) || { echo "posflow.mk: no $(OUT)/chunks/$(C)" >&2; exit 1; }
	@$(MAKE) -f $(call q,$(SELF)) --no-print-directory SUB_MAKE=yes \
	    LATER_ONLY=yes $(OUT)/$(LAST)/$(C)

# (The lists of every chunk are printed by make, or globbed by the shell:
# thousands of chunks, in one command line for the shell, would be too
# long for it.)
list-chunks:
	@:$(foreach f,$(CHUNK_FILES),$(info $(notdir $(f))))

last-dir:
	@echo $(OUT)/$(LAST)

shards: $(OUT)/shards/manifest.json

# shard writes its manifest last: without one the directory is not done.
# -f: shard replaces the set there itself, once it holds the directory's
# lock (a second build at the same time is refused before it removes
# anything).
$(OUT)/shards/manifest.json: $(FINAL)
	@test -f $(OUT)/chunks/.done || { echo "posflow.mk: the split into" \
	    "$(OUT)/chunks is not complete: run make (all) or make chunks" \
	    "first" >&2; exit 1; }
	@$(if $(FINAL),:,{ echo "posflow.mk: no chunks in" \
	    "$(OUT)/chunks (no games in GAMES?)" >&2; exit 1; })
	a=(); for f in $(OUT)/chunks/chunk-*.pos.zst; do \
	    a+=($(OUT)/$(LAST)/$${f##*/}); done; \
	$(call tool,shard) -f --seed $(SEED) $(SHARDS) -o $(OUT)/shards "$${a[@]}"

clean:
	rm -rf $(OUT)
