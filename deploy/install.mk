# Makefile fragment, included by the top Makefile: make install / uninstall.
#
#   make install [PREFIX=/usr/local] [DESTDIR=] [SYSCONFDIR=/etc]
#   make uninstall (the same variables)
#
# Installs the binary ($(BINDIR)), the man page eosaudit(1) ($(MANDIR)/man1),
# the systemd unit ($(UNITDIR), with ExecStart and the configuration path
# rewritten for BINDIR and SYSCONFDIR), the example configuration
# ($(SYSCONFDIR)/eosaudit/eosaudit.conf.example; the admin's eosaudit.conf is
# never touched) and the operations documents with the alert rules and the
# Grafana dashboard ($(DOCDIR)).  DESTDIR is prepended to every path (for
# packages and tests); nothing here runs systemctl.
PREFIX     ?= /usr/local
BINDIR     ?= $(PREFIX)/bin
MANDIR     ?= $(PREFIX)/share/man
DOCDIR     ?= $(PREFIX)/share/doc/eosaudit
UNITDIR    ?= $(PREFIX)/lib/systemd/system
SYSCONFDIR ?= /etc
INSTALL    ?= install

INSTALL_DOCS := README.md docs/RUNBOOK.md docs/CONFIG.md \
                deploy/prometheus/alerts.yml deploy/grafana/eosaudit.json

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
	$(INSTALL) -m 0644 $(INSTALL_DOCS) $(DESTDIR)$(DOCDIR)

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/eosaudit $(DESTDIR)$(MANDIR)/man1/eosaudit.1 \
		$(DESTDIR)$(UNITDIR)/eosaudit.service \
		$(DESTDIR)$(SYSCONFDIR)/eosaudit/eosaudit.conf.example \
		$(addprefix $(DESTDIR)$(DOCDIR)/,$(notdir $(INSTALL_DOCS)))
	rmdir $(DESTDIR)$(DOCDIR) $(DESTDIR)$(SYSCONFDIR)/eosaudit 2>/dev/null || :
