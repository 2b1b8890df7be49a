# Makefile fragment, included by the top Makefile: make install / uninstall.
#
#   make install [PREFIX=/usr/local] [DESTDIR=] [SYSCONFDIR=/etc]
#   make uninstall (the same variables)
#
# Installs the binary ($(BINDIR)), the man page eosaudit(1) ($(MANDIR)/man1),
# the systemd unit ($(UNITDIR), with ExecStart and the configuration path
# rewritten for BINDIR and SYSCONFDIR), the example configuration
# ($(SYSCONFDIR)/eosaudit/eosaudit.conf.example; the admin's eosaudit.conf is
# never touched) and the documentation ($(DOCDIR)): the README, every
# document of docs/ with its pictures and the man page, the header
# contract, the benchmarks, the alert rules, the Grafana dashboard, the
# unit and the example configuration as the repository has them, each at
# its path in the repository, so that the links between them resolve.
# DESTDIR is prepended to every path (for packages and tests); nothing
# here runs systemctl.
PREFIX     ?= /usr/local
BINDIR     ?= $(PREFIX)/bin
MANDIR     ?= $(PREFIX)/share/man
DOCDIR     ?= $(PREFIX)/share/doc/eosaudit
UNITDIR    ?= $(PREFIX)/lib/systemd/system
SYSCONFDIR ?= /etc
INSTALL    ?= install

INSTALL_DOCS := README.md BENCHMARKS.md bench/throughput.png \
                $(wildcard docs/*.md docs/*.png) \
                docs/eosaudit.1 schema/HEADERS.md \
                deploy/prometheus/alerts.yml deploy/grafana/eosaudit.json \
                deploy/systemd/eosaudit.service deploy/eosaudit.conf.example
INSTALL_DOC_DIRS := $(filter-out ./,$(sort $(dir $(INSTALL_DOCS)))) deploy/

.PHONY: install uninstall

install: $(BUILD)/eosaudit docs/eosaudit.1 deploy/systemd/eosaudit.service \
         deploy/eosaudit.conf.example $(INSTALL_DOCS)
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 \
		$(DESTDIR)$(UNITDIR) $(DESTDIR)$(SYSCONFDIR)/eosaudit \
		$(DESTDIR)$(DOCDIR)
	$(INSTALL) -m 0755 $(BUILD)/eosaudit $(DESTDIR)$(BINDIR)/eosaudit
	$(INSTALL) -m 0644 docs/eosaudit.1 $(DESTDIR)$(MANDIR)/man1/eosaudit.1
	sed -e 's|/usr/local/bin/eosaudit|$(BINDIR)/eosaudit|g' \
	    -e 's|/etc/eosaudit/|$(SYSCONFDIR)/eosaudit/|g' \
	    deploy/systemd/eosaudit.service >$(DESTDIR)$(UNITDIR)/eosaudit.service.tmp
	chmod 0644 $(DESTDIR)$(UNITDIR)/eosaudit.service.tmp
	mv $(DESTDIR)$(UNITDIR)/eosaudit.service.tmp $(DESTDIR)$(UNITDIR)/eosaudit.service
	$(INSTALL) -m 0644 deploy/eosaudit.conf.example \
		$(DESTDIR)$(SYSCONFDIR)/eosaudit/eosaudit.conf.example
	for f in $(INSTALL_DOCS); do \
		$(INSTALL) -D -m 0644 "$$f" "$(DESTDIR)$(DOCDIR)/$$f" || exit 1; \
	done

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/eosaudit $(DESTDIR)$(MANDIR)/man1/eosaudit.1 \
		$(DESTDIR)$(UNITDIR)/eosaudit.service \
		$(DESTDIR)$(SYSCONFDIR)/eosaudit/eosaudit.conf.example \
		$(addprefix $(DESTDIR)$(DOCDIR)/,$(INSTALL_DOCS))
	rmdir $(addprefix $(DESTDIR)$(DOCDIR)/,$(INSTALL_DOC_DIRS)) 2>/dev/null || :
	rmdir $(DESTDIR)$(DOCDIR) $(DESTDIR)$(SYSCONFDIR)/eosaudit 2>/dev/null || :
