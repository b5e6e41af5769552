// SPDX-License-Identifier: LGPL-2.1-or-later

// An HTTP API on a unix socket, the way container engines serve theirs,
// that logs and authorises every request by the caller's container: the
// cgroup the kernel recorded when the caller connected, which the caller
// cannot change afterwards by moving itself.
//
//	go-api-socket -socket /run/demo.sock -admin host,systemd-service \
//	              -read docker,podman,lxc
//
//	curl --unix-socket /run/demo.sock http://x/whoami
//
// -admin runtimes may do anything, -read runtimes may only GET; everyone
// else, a runtime's monitor, a container that a user may have named
// (inside a user's service manager, or below a cgroup root does not own:
// that user names its cgroups as it likes) and every caller without a
// record get 403.  An application's runtime (flatpak, snap, app) is its
// user's claim: list it only where that is enough.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"log"
	"net"
	"net/http"
	"os"
	"strings"

	peercgroup "github.com/peercgroup/peercgroup/bindings/go"
)

func set(list string) map[string]bool {
	m := map[string]bool{}
	for _, s := range strings.Split(list, ",") {
		if s != "" {
			m[s] = true
		}
	}
	return m
}

func main() {
	sock := flag.String("socket", "/run/go-api-socket.sock", "unix socket to serve on")
	admin := flag.String("admin", "host,systemd-service,user-session", "runtimes allowed everything")
	read := flag.String("read", "", "runtimes allowed GET only")
	flag.Parse()
	admins, readers := set(*admin), set(*read)

	authorise := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			p := peercgroup.PeerFromContext(r.Context())
			rt := p.Container.Runtime.String()
			// A runtime's monitor (conmon, lxc.monitor) is not the container,
			// and a user may name its own cgroups after any container (an
			// application's id is always its user's claim: see above).
			monitor := p.Container.Flags&peercgroup.FlagMonitor != 0
			userNamed := p.Container.Flags&(peercgroup.FlagRootless|peercgroup.FlagUnproven) != 0 &&
				p.Container.App == ""
			allowed := p.Err == nil && !monitor && !userNamed &&
				(admins[rt] || readers[rt] && r.Method == http.MethodGet)
			who := rt + " " + p.Container.ID
			if monitor {
				who += " (monitor)"
			}
			if p.Err != nil {
				who = "unknown caller: " + p.Err.Error() // no record, no proof
			}
			log.Printf("%s %s from %s (cgroup %s, pid %d): allowed=%v",
				r.Method, r.URL.Path, who, p.Info.Path, p.Info.PID, allowed)
			if !allowed {
				http.Error(w, "forbidden for "+who, http.StatusForbidden)
				return
			}
			next.ServeHTTP(w, r)
		})
	}

	mux := http.NewServeMux()
	mux.HandleFunc("/whoami", func(w http.ResponseWriter, r *http.Request) {
		p := peercgroup.PeerFromContext(r.Context())
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"cgroup": p.Info.Path, "cgroup_id": p.Info.CgroupID, "pid": p.Info.PID,
			"runtime": p.Container.Runtime.String(), "id": p.Container.ID,
			"pod": p.Container.Pod, "app": p.Container.App, "unit": p.Container.Unit,
			"flags": p.Container.Flags.String(),
		})
	})

	if err := os.Remove(*sock); err != nil && !errors.Is(err, os.ErrNotExist) {
		log.Fatal(err)
	}
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: *sock, Net: "unix"})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := peercgroup.ModuleInfo(); err != nil {
		log.Printf("warning: %v: every request will be refused", err)
	}
	srv := &http.Server{Handler: authorise(mux), ConnContext: peercgroup.ConnContext}
	log.Fatal(srv.Serve(peercgroup.NewListener(l)))
}
