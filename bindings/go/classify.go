// SPDX-License-Identifier: LGPL-2.1-or-later

package peercgroup

import (
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// The container classifier of userlib/classify.c, rule for rule: a cgroup
// path in, the runtime and identity out.  No I/O but one cached look at
// the caller's cgroup namespace.  The parity test runs it over
// tests/data/classify.tsv, the table the C classifier passes.

// Runtime is a container runtime (enum peercgroup_runtime).  New values
// may be added in any release: treat one you do not know as Unknown.
type Runtime int

const (
	Unknown       Runtime = iota // valid path, nothing recognised
	Host                         // the root cgroup "/", caller in the initial cgroup ns
	SystemService                // system.slice/<unit>, init.scope
	UserSession                  // user.slice/user-UID.slice/...
	Docker
	Podman     // podman / libpod, incl. conmon
	Containerd // cri-containerd-*, nerdctl-*, ctr
	CRIO
	Kubernetes // cgroupfs kubepods, CRI runtime unknown
	LXC        // LXC, LXD, Incus
	Nspawn     // systemd-nspawn@NAME.service
	Machine    // machined: machine-NAME.scope (nspawn, libvirt)
	ECS        // Amazon ECS: /ecs/<task>/<container>
	Flatpak    // app-flatpak-<appid>-<n>.scope
	Snap       // snap.<snap>.<app>[-<uuid>].scope|.service
	App        // app-[<launcher>-]<appid>-<random>.scope|.service
	runtimeCount
)

var runtimeNames = [runtimeCount]string{
	Unknown:       "unknown",
	Host:          "host",
	SystemService: "systemd-service",
	UserSession:   "user-session",
	Docker:        "docker",
	Podman:        "podman",
	Containerd:    "containerd",
	CRIO:          "cri-o",
	Kubernetes:    "kubernetes",
	LXC:           "lxc",
	Nspawn:        "systemd-nspawn",
	Machine:       "machined",
	ECS:           "ecs",
	Flatpak:       "flatpak",
	Snap:          "snap",
	App:           "app",
}

// String is peercgroup_runtime_name(): "docker", "podman", ...
func (r Runtime) String() string {
	if r < 0 || r >= runtimeCount {
		return "unknown"
	}
	return runtimeNames[r]
}

// ContainerFlags qualify a classification (PEERCGROUP_CT_*).
type ContainerFlags uint32

const (
	// FlagConmon: podman's or CRI-O's conmon (also FlagMonitor).
	FlagConmon ContainerFlags = 1 << 0
	// FlagKubernetes: under kubepods.
	FlagKubernetes ContainerFlags = 1 << 1
	// FlagRootless: a container inside user@UID.service.
	FlagRootless ContainerFlags = 1 << 2
	// FlagMonitor: the runtime's own privileged helper, not the payload
	// (conmon, lxc.monitor.*, the nspawn supervisor).  Never trust a
	// monitor as if it were the container.
	FlagMonitor ContainerFlags = 1 << 3
	// FlagOutside: the path starts with "/..": the peer is outside the
	// caller's cgroup namespace, Up levels above its root.
	FlagOutside ContainerFlags = 1 << 4
	// FlagNamespaced: the caller is not in the initial cgroup namespace
	// (or the path proves it): "/" is not the host.
	FlagNamespaced ContainerFlags = 1 << 5
	// FlagUnproven: set by ClassifyPeer only, when the answer rests on
	// names (a container's, an application's, a pod's, "kubepods") that
	// nothing shows root gave: the parent of the deepest cgroup so named
	// belongs to another user or others may write it (a subtree systemd
	// delegated to a user: Delegate=yes with User=, user@UID.service), or
	// this process cannot look.  A user may have named it after any
	// container.  Always set with FlagOutside: past "/.." no name is the
	// top of the tree.
	FlagUnproven ContainerFlags = 1 << 6
)

// The names of peercgroup_class_flag_name(), by bit.
var containerFlagNames = []string{"conmon", "kubernetes", "rootless", "monitor", "outside", "namespaced", "unproven"}

// String lists the flags, comma-separated, "-" for none.
func (f ContainerFlags) String() string {
	var s []string
	for bit, name := range containerFlagNames {
		if f&(1<<bit) != 0 {
			s = append(s, name)
		}
	}
	if len(s) == 0 {
		return "-"
	}
	return strings.Join(s, ",")
}

// Container is what the classifier found in a cgroup path (struct
// peercgroup_class).
type Container struct {
	Runtime Runtime
	Flags   ContainerFlags
	Up      int   // number of leading "/.." components
	UID     int64 // owner from "user-UID.slice" (or user@UID.service), or -1
	// Container id (64 hex) or name (LXC, machine, nspawn, ctr; systemd
	// \xNN escapes undone); for services, sessions and applications the
	// unit; "" if none.
	ID       string
	Pod      string // Kubernetes pod UID (dashes restored), podman pod id or ECS task
	QoS      string // Kubernetes QoS class: "guaranteed", "burstable", "besteffort"
	App      string // flatpak/desktop app id ("org.gnome.Maps"), snap "<snap>.<app>"
	Launcher string // who launched the application ("gnome", "kde", "flatpak")
	Unit     string // the systemd unit, as sd_pid_get_unit() would say
	UserUnit string // the unit inside user@UID.service (sd_pid_get_user_unit())
}

// Namespace says whose view a path is in.
type Namespace int

const (
	// CallerNamespace: look once per process at /proc/self/ns/cgroup.
	CallerNamespace Namespace = iota
	// InitialNamespace: the caller is in the initial cgroup namespace:
	// "/" is the host.
	InitialNamespace
	// ChildNamespace: the caller is in a child cgroup namespace: "/" is
	// its own root.
	ChildNamespace
)

const (
	maxPathLen    = 65536
	cgroupNameMax = 255 // kernfs names are at most NAME_MAX bytes
	// nsfs inode of the initial cgroup namespace (PROC_CGROUP_INIT_INO).
	initialCgroupNSIno = 0xEFFFFFFB
	// Field sizes of struct peercgroup_class, NUL included: names that do
	// not fit are not reported, as in C.
	nameSize     = 256
	podSize      = 72
	launcherSize = 64
)

type idFormat int

const (
	idHex64 idFormat = iota // exactly 64 lowercase hex digits
	idName                  // any non-empty name
	idUnit                  // systemd-escaped name (\xNN), unescaped
	idNone                  // nothing may follow the prefix
)

type where int

const (
	anywhere where = iota // any position
	parentIs              // the parent component is ctx
	under                 // some ancestor is ctx (libpod_parent, kubepods)
	top                   // the parent is ctx and is the first component
)

type rule struct {
	where  where
	ctx    string
	prefix string
	suffix string
	fmt    idFormat
	rt     Runtime
	flags  ContainerFlags
}

const conmon = FlagConmon | FlagMonitor

// Order matters: a longer prefix must precede the prefix it extends.
var rules = []rule{
	{anywhere, "", "docker-", ".scope", idHex64, Docker, 0},
	{parentIs, "docker", "", "", idHex64, Docker, 0},
	{anywhere, "", "libpod-conmon-", ".scope", idHex64, Podman, conmon},
	{anywhere, "", "libpod-payload-", ".scope", idHex64, Podman, 0},
	{anywhere, "", "libpod-payload-", "", idHex64, Podman, 0},
	{anywhere, "", "libpod-", ".scope", idHex64, Podman, 0},
	// cgroupfs: under libpod_parent, or wherever --cgroup-parent says
	{anywhere, "", "libpod-conmon-", "", idHex64, Podman, conmon},
	{anywhere, "", "libpod-", "", idHex64, Podman, 0},
	{under, "libpod_parent", "conmon", "", idNone, Podman, conmon},
	{anywhere, "", "cri-containerd-", ".scope", idHex64, Containerd, 0},
	{anywhere, "", "nerdctl-", ".scope", idHex64, Containerd, 0},
	{top, "default", "", "", idName, Containerd, 0},
	{top, "k8s.io", "", "", idName, Containerd, 0},
	{anywhere, "", "crio-conmon-", ".scope", idHex64, CRIO, conmon},
	{anywhere, "", "crio-", ".scope", idHex64, CRIO, 0},
	{under, "kubepods", "crio-conmon-", "", idHex64, CRIO, conmon},
	{under, "kubepods", "crio-", "", idHex64, CRIO, 0},
	{anywhere, "", "lxc.payload.", "", idName, LXC, 0},
	{anywhere, "", "lxc.monitor.", "", idName, LXC, FlagMonitor},
	{parentIs, "lxc", "", "", idName, LXC, 0},
	{anywhere, "", "systemd-nspawn@", ".service", idUnit, Nspawn, 0},
	{parentIs, "machine.slice", "machine-", ".scope", idUnit, Machine, 0},
}

func isHex64(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !(s[i] >= '0' && s[i] <= '9' || s[i] >= 'a' && s[i] <= 'f') {
			return false
		}
	}
	return true
}

func hexval(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// copyName is a, with systemd's \xNN escapes undone if unit; "" and false
// if the result would be empty, contain NUL or '/', or not fit in size
// bytes with its NUL.
func copyName(a string, size int, unit bool) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(a); i++ {
		c := a[i]
		if unit && c == '\\' && i+3 < len(a) && a[i+1] == 'x' &&
			hexval(a[i+2]) >= 0 && hexval(a[i+3]) >= 0 {
			c = byte(hexval(a[i+2])<<4 | hexval(a[i+3]))
			i += 3
		}
		if c == 0 || c == '/' || b.Len()+1 >= size {
			return "", false
		}
		b.WriteByte(c)
	}
	return b.String(), b.Len() > 0
}

// walk goes over the components of a path.
type walk struct {
	rest string // after the current component, its '/' included
	c    string // current component
	more bool   // another component follows
}

func walkStart(p string) walk {
	c, rest, more := strings.Cut(p, "/")
	return walk{rest, c, more}
}

// start is where the current component begins in the string of n bytes
// that the walk began with.
func (w *walk) start(n int) int {
	n -= len(w.c) + len(w.rest)
	if w.more {
		n-- // the '/' before rest
	}
	return n
}

func (w *walk) next() bool {
	if !w.more {
		return false
	}
	*w = walkStart(w.rest)
	return true
}

// What the walk has seen above the current component.
type walkContext struct {
	parent string
	depth  int  // 0: first component
	kube   bool // under kubepods
	libpod bool // under libpod_parent
	ecs    bool // first component is "ecs"
}

func (r *rule) match(x *walkContext, c string, out *Container) bool {
	switch r.where {
	case parentIs:
		if x.parent != r.ctx {
			return false
		}
	case top:
		if x.depth != 1 || x.parent != r.ctx {
			return false
		}
	case under:
		if r.ctx == "kubepods" && !x.kube || r.ctx != "kubepods" && !x.libpod {
			return false
		}
	}
	if !strings.HasPrefix(c, r.prefix) || len(c) < len(r.prefix)+len(r.suffix) ||
		!strings.HasSuffix(c, r.suffix) {
		return false
	}
	id := c[len(r.prefix) : len(c)-len(r.suffix)]
	switch r.fmt {
	case idHex64:
		if !isHex64(id) {
			return false
		}
	case idNone:
		if id != "" {
			return false
		}
	}
	if r.fmt != idNone {
		var ok bool
		if out.ID, ok = copyName(id, nameSize, r.fmt == idUnit); !ok {
			return false
		}
	}
	out.Runtime = r.rt
	out.Flags |= r.flags
	return true
}

// matchCgroupsPath: "<slice>:<prefix>:<id>", an OCI systemd cgroupsPath
// used as a directory name by a runtime on the cgroupfs driver while
// kubelet uses systemd's.
func matchCgroupsPath(c string, out *Container) bool {
	for _, t := range []struct {
		tag string
		rt  Runtime
	}{{":cri-containerd:", Containerd}, {":crio:", CRIO}} {
		if len(c) <= 64+len(t.tag) {
			continue
		}
		// the first occurrence, and it must end 64 bytes before the end
		i := strings.Index(c[:len(c)-64], t.tag)
		if i >= 0 && i+len(t.tag)+64 == len(c) && isHex64(c[i+len(t.tag):]) {
			out.ID = c[i+len(t.tag):]
			out.Runtime = t.rt
			return true
		}
	}
	return false
}

// Kubernetes pod UID: the systemd driver writes '_' for '-'.
func setPodUID(out *Container, uid string) bool {
	if uid == "" || len(uid) >= podSize {
		return false
	}
	b := []byte(uid)
	for i, c := range b {
		if c == '_' {
			c = '-'
		}
		if hexval(c) < 0 && c != '-' {
			return false
		}
		b[i] = c
	}
	out.Pod = string(b)
	return true
}

// QoS and pod from "burstable", "pod<uid>" (cgroupfs) or from the dash
// separated words of "kubepods-burstable-pod<uid>.slice" (systemd);
// whether c gave either.
func kubeContext(c string, out *Container) (took bool) {
	slice := strings.HasSuffix(c, ".slice")
	if slice {
		c = c[:len(c)-len(".slice")]
	}
	for c != "" {
		// cgroupfs "pod<uid>" keeps the UID's dashes: one word
		w, rest, found := c, "", false
		if slice {
			w, rest, found = strings.Cut(c, "-")
		}
		if w == "burstable" || w == "besteffort" {
			out.QoS = w
			took = true
		} else if strings.HasPrefix(w, "pod") && len(w) > 3 {
			took = setPodUID(out, w[3:]) || took
		}
		if !found {
			break
		}
		c = rest
	}
	return took
}

func isKubepods(c string) bool {
	return c == "kubepods" || c == "kubepods.slice" ||
		strings.HasSuffix(c, "-kubepods.slice") // kind: kubelet-kubepods.slice
}

// sliceUID: "user-1000.slice" -> 1000, else -1.
func sliceUID(c, pfx, sfx string) int64 {
	if !strings.HasPrefix(c, pfx) || !strings.HasSuffix(c, sfx) ||
		len(c) <= len(pfx)+len(sfx) || len(c)-len(pfx)-len(sfx) > 10 {
		return -1
	}
	var uid int64
	for _, d := range []byte(c[len(pfx) : len(c)-len(sfx)]) {
		if d < '0' || d > '9' {
			return -1
		}
		uid = uid*10 + int64(d-'0')
	}
	if uid >= 0xffffffff || uid == 0xffff { // systemd's uid_is_valid()
		return -1
	}
	return uid
}

// ---- applications (systemd.io/DESKTOP_ENVIRONMENTS) ----

func allDigits(a string) bool {
	for i := 0; i < len(a); i++ {
		if a[i] < '0' || a[i] > '9' {
			return false
		}
	}
	return a != ""
}

// 8-4-4-4-12 hex digits
func isUUID(a string) bool {
	if len(a) != 36 {
		return false
	}
	for i := 0; i < len(a); i++ {
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if a[i] != '-' {
				return false
			}
		} else if hexval(a[i]) < 0 {
			return false
		}
	}
	return true
}

// flatpak names its scope itself, with the app id unescaped.
func matchFlatpak(c string, out *Container) bool {
	if !strings.HasPrefix(c, "app-flatpak-") || !strings.HasSuffix(c, ".scope") ||
		len(c) < len("app-flatpak-")+len(".scope") {
		return false
	}
	body := c[len("app-flatpak-") : len(c)-len(".scope")]
	dash := strings.LastIndexByte(body, '-')
	if dash < 0 || !allDigits(body[dash+1:]) {
		return false
	}
	var ok bool
	if out.App, ok = copyName(body[:dash], nameSize, true); !ok {
		return false
	}
	out.Launcher = "flatpak"
	out.Runtime = Flatpak
	return true
}

// snap.<snap>.<app>-<uuid>.scope, snap.<snap>.<app>.service
func matchSnap(c string, out *Container) bool {
	scope := strings.HasSuffix(c, ".scope")
	if !strings.HasPrefix(c, "snap.") || !(scope || strings.HasSuffix(c, ".service")) {
		return false
	}
	sfx := len(".service")
	if scope {
		sfx = len(".scope")
	}
	if len(c) < len("snap.")+sfx {
		return false
	}
	body := c[len("snap.") : len(c)-sfx]
	if scope {
		n := len(body)
		if n < 38 || (body[n-37] != '-' && body[n-37] != '.') || !isUUID(body[n-36:]) {
			return false
		}
		body = body[:n-37]
	}
	// "<snap>.<app>": both parts non-empty
	if len(body) < 3 || body[0] == '.' || body[len(body)-1] == '.' || strings.IndexByte(body, '.') < 0 {
		return false
	}
	var ok bool
	if out.App, ok = copyName(body, nameSize, false); !ok {
		return false
	}
	out.Runtime = Snap
	return true
}

// app-[<launcher>-]<appid>-<random>.scope and
// app-[<launcher>-]<appid>[@<random>].service, where <appid> is
// systemd-escaped (a '-' in it is \x2d), so words split on '-'.
func matchApp(c string, out *Container) bool {
	scope := strings.HasSuffix(c, ".scope")
	if !strings.HasPrefix(c, "app-") || !(scope || strings.HasSuffix(c, ".service")) {
		return false
	}
	sfx := len(".service")
	if scope {
		sfx = len(".scope")
	}
	if len(c) < len("app-")+sfx {
		return false
	}
	body := c[len("app-") : len(c)-sfx]
	atRand := false
	if !scope {
		if at := strings.IndexByte(body, '@'); at >= 0 {
			if at+1 == len(body) {
				return false // "app-x@.service" is a template
			}
			body = body[:at]
			atRand = true
		}
	}
	words := strings.Split(body, "-")
	if len(words) > 3 {
		return false
	}
	for _, w := range words {
		if w == "" {
			return false
		}
	}
	// scope: appid-rand, launcher-appid-rand; service: appid[@rand],
	// launcher-appid[@rand], launcher-appid-rand
	var appid, launcher string
	hasLauncher := false
	nw := len(words)
	oneWord := 1
	if scope {
		oneWord = 2
	}
	switch {
	case nw == oneWord:
		appid = words[0]
	case nw == 2 || nw == 3 && !atRand:
		launcher, appid, hasLauncher = words[0], words[1], true
	default:
		return false
	}
	var ok bool
	if out.App, ok = copyName(appid, nameSize, true); !ok {
		return false
	}
	if hasLauncher {
		if out.Launcher, ok = copyName(launcher, launcherSize, true); !ok {
			out.App = ""
			return false
		}
	}
	out.Runtime = App
	return true
}

// ---- systemd units, as sd_pid_get_unit() / _user_unit() find them ----

func isUnit(c string) bool {
	return strings.HasSuffix(c, ".service") || strings.HasSuffix(c, ".scope")
}

// findUnit: the first component at or after w's that is not a slice, if
// it is a unit.
func findUnit(w *walk) (string, bool) {
	for {
		if !strings.HasSuffix(w.c, ".slice") {
			return w.c, isUnit(w.c)
		}
		if !w.next() {
			return "", false
		}
	}
}

func fillUnits(p string, out *Container) {
	if p == "" {
		return
	}
	w := walkStart(p)
	unit, ok := findUnit(&w)
	if !ok {
		return
	}
	out.Unit, _ = copyName(unit, nameSize, false)
	if sliceUID(unit, "user@", ".service") < 0 || !w.next() {
		return
	}
	if unit, ok = findUnit(&w); ok {
		out.UserUnit, _ = copyName(unit, nameSize, false)
	}
}

// ---- the caller's cgroup namespace ----

var callerNS struct {
	once    sync.Once
	initial bool
}

// callerInInitialNS: looked up once; where /proc cannot tell, the caller
// is assumed NOT to be in the initial namespace, so "/" is never the host.
func callerInInitialNS() bool {
	callerNS.once.Do(func() { callerNS.initial = lookAtNS("/proc/self/ns/cgroup") == InitialNamespace })
	return callerNS.initial
}

// lookAtNS: CallerNamespace when file cannot be looked at.
func lookAtNS(file string) Namespace {
	var st unix.Stat_t
	switch {
	case unix.Stat(file, &st) != nil:
		return CallerNamespace
	case st.Ino == initialCgroupNSIno:
		return InitialNamespace
	default:
		return ChildNamespace
	}
}

// callerNamespaceNow: the calling thread's, looked at again, for a peer's
// answer: namespaces are per thread, and the caller may have unshared its
// cgroup namespace since the first classification.  Never the initial one
// when /proc cannot tell.
func callerNamespaceNow() Namespace {
	ns := lookAtNS("/proc/thread-self/ns/cgroup")
	if ns == CallerNamespace {
		ns = lookAtNS("/proc/self/ns/cgroup")
	}
	if ns == CallerNamespace {
		return ChildNamespace
	}
	return ns
}

// ---- the classifier ----

// validate skips the leading "/.." run; rest is what follows ("" if
// nothing), ok false if p is not a cgroup path.
func validate(p string) (rest string, up int, ok bool) {
	p = strings.TrimPrefix(p, "/")
	if p == "" {
		return "", 0, true
	}
	w := walkStart(p)
	for w.c == ".." {
		up++
		if !w.next() {
			return "", up, true
		}
	}
	rest = w.c
	if w.more {
		rest += "/" + w.rest
	}
	for {
		if w.c == "" || len(w.c) > cgroupNameMax || w.c == "." || w.c == ".." {
			return "", up, false
		}
		if !w.next() {
			return rest, up, true
		}
	}
}

// classify returns where, in p, the deepest component whose name the
// answer rests on begins (a container's, an application's, or, with no
// container found, the pod's, else the QoS level's, else the first
// "kubepods"), or -1.  Whoever may create a cgroup beside it chose that
// name, and the names above it are those of cgroups its maker chose to
// create it in (nameProven).
func classify(p string, out *Container) (named int) {
	named = -1
	var x walkContext
	var unit string
	var haveUnit, userSlice, found, app, inUserManager bool
	leading := true // only slices so far
	w := walkStart(p)
	first := w.c
	x.ecs = first == "ecs"
	for {
		c := w.c
		for i := range rules {
			if rules[i].match(&x, c, out) {
				found = true
				break
			}
		}
		if found {
			named = w.start(len(p))
			// nspawn splits itself off from its payload
			if (out.Runtime == Nspawn || out.Runtime == Machine) && w.next() && w.c == "supervisor" {
				out.Flags |= FlagMonitor
			}
			break
		}
		if matchCgroupsPath(c, out) {
			named = w.start(len(p))
			found = true
			break
		}
		if x.ecs && x.depth == 1 { // /ecs/<task>[/<container>]
			named = w.start(len(p))
			if len(c) < podSize {
				out.Pod, _ = copyName(c, podSize, false)
			}
			out.Runtime = ECS
			if w.next() {
				out.ID, _ = copyName(w.c, nameSize, false)
				named = w.start(len(p))
			}
			found = true
			break
		}
		if isKubepods(c) {
			if !x.kube {
				named = w.start(len(p))
			}
			x.kube = true
		} else if x.kube {
			// The first pod is the peer's: below it, a container given
			// its own subtree may name cgroups anything.
			if out.Pod == "" && kubeContext(c, out) {
				named = w.start(len(p))
			}
			// cgroupfs driver: /kubepods/<qos>/pod<uid>/<container id>
			if out.Pod != "" && isHex64(c) && strings.HasPrefix(x.parent, "pod") {
				out.ID = c
				out.Runtime = Kubernetes
				named = w.start(len(p))
				found = true
				break
			}
		} else if x.libpod {
			if isHex64(c) { // cgroupfs pod: /libpod_parent/<pod id>/
				out.Pod = c
			}
		} else if isHex64(c) {
			// docker --cgroup-parent under cgroupfs: /<parent>/<id>
			out.ID = c
			out.Runtime = Docker
			named = w.start(len(p))
			found = true
			break
		}
		if c == "libpod_parent" {
			x.libpod = true
		}
		// Desktop applications live in the user's service manager; a
		// system unit that happens to start with "app-" is not one.
		if matchSnap(c, out) || inUserManager && (matchFlatpak(c, out) || matchApp(c, out)) {
			app = true
			unit, haveUnit = c, true
			named = w.start(len(p))
			break
		}
		if c == "user.slice" && x.depth == 0 {
			userSlice = true
		}
		// The owner, as systemd finds it: only in the slices from the top
		// and the first unit after them.  Below, a delegated subtree may
		// name its cgroups anything.
		if leading && out.UID < 0 {
			if uid := sliceUID(c, "user-", ".slice"); uid >= 0 {
				out.UID = uid
			}
		}
		if uid := sliceUID(c, "user@", ".service"); leading && uid >= 0 {
			inUserManager = true
			out.Flags |= FlagRootless
			if out.UID < 0 {
				out.UID = uid
			}
		}
		// podman pods: machine-libpod_pod_<id>.slice, user-libpod_pod_<id>.slice
		if out.Pod == "" && strings.HasSuffix(c, ".slice") {
			start, end := strings.Index(c, "libpod_pod_")+len("libpod_pod_"), len(c)-len(".slice")
			if start >= len("libpod_pod_") && start <= end && isHex64(c[start:end]) {
				out.Pod = c[start:end]
				// kept with no container found only there
				if x.kube {
					named = w.start(len(p))
				}
			}
		}
		if isUnit(c) {
			unit, haveUnit = c, true
		}
		leading = leading && strings.HasSuffix(c, ".slice")
		x.parent, x.depth = c, x.depth+1
		if !w.next() {
			break
		}
	}

	if x.kube && !app {
		out.Flags |= FlagKubernetes
		if out.Pod != "" && out.QoS == "" {
			out.QoS = "guaranteed" // no QoS level in the path
		}
		if !found {
			out.Runtime = Kubernetes
		}
		return named
	}
	if found {
		return named
	}

	// Not a container: only meaningful facts below, never a guess.
	out.Flags &^= FlagRootless
	out.Pod = ""
	if app {
		// runtime set by the match
	} else if userSlice {
		out.Runtime = UserSession
	} else if haveUnit && (first == "system.slice" || first == "init.scope") {
		out.Runtime = SystemService
	}
	if out.Runtime != Unknown && haveUnit {
		out.ID, _ = copyName(unit, nameSize, false)
	}
	return named
}

func invalid(op string) error { return &Error{op, unix.EINVAL} }

// ClassifyPath classifies the cgroup path p, as the module or
// /proc/PID/cgroup print it, seen from ns.  A leading '/' is optional; a
// leading run of "/.." components is valid (FlagOutside, Up).  The
// outermost container wins ("docker in kubepods" is docker).  It fails
// with ErrInvalidPath (EINVAL) for what cannot be a cgroup path: empty,
// NUL, an empty or "." component, ".." after a name, a component over 255
// bytes, over 64 KiB; the Container is then Unknown with UID -1.
func ClassifyPath(p string, ns Namespace) (Container, error) {
	out, _, err := classifyNamed(p, ns)
	return out, err
}

// classifyNamed is ClassifyPath, and where in p the name it rests on
// begins, or -1.
func classifyNamed(p string, ns Namespace) (out Container, named int, err error) {
	out, named = Container{Runtime: Unknown, UID: -1}, -1
	if ns < CallerNamespace || ns > ChildNamespace {
		return out, named, invalid("classify")
	}
	if len(p) == 0 || len(p) > maxPathLen || strings.IndexByte(p, 0) >= 0 {
		return out, named, invalid("classify")
	}
	rest, up, ok := validate(p)
	if !ok {
		return out, named, invalid("classify")
	}
	out.Up = up
	initial := ns == InitialNamespace || ns == CallerNamespace && callerInInitialNS()
	if up > 0 { // only a child namespace can see "/.."
		out.Flags |= FlagOutside
		initial = false
	}
	if !initial {
		out.Flags |= FlagNamespaced
	}
	if rest == "" {
		// The root of the caller's view: the host only from the initial
		// namespace; an ancestor of it is unknown.
		if up == 0 && initial {
			out.Runtime = Host
		}
		return out, named, nil
	}
	if named = classify(rest, &out); named >= 0 {
		named += len(p) - len(rest)
	}
	fillUnits(rest, &out)
	return out, named, nil
}

// Classify is ClassifyPath(p, CallerNamespace) without the error: a path
// that cannot be a cgroup path is Unknown.
func Classify(p string) Container {
	c, _ := ClassifyPath(p, CallerNamespace)
	return c
}
