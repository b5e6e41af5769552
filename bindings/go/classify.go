// SPDX-License-Identifier: LGPL-2.1-or-later

package peercgroup

import (
	"strings"

	"golang.org/x/sys/unix"
)

// The container classifier of userlib/classify.c, rule for rule: a cgroup
// path in, the runtime and identity out.  Pure: no I/O.  The parity test
// runs it over tests/data/classify.tsv, the table the C classifier passes.

// Runtime is a container runtime (enum peercgroup_runtime).
type Runtime int

const (
	Unknown       Runtime = iota // valid path, nothing recognised
	Host                         // the root cgroup "/"
	SystemService                // system.slice/<unit>, init.scope
	UserSession                  // user.slice/user-UID.slice/...
	Docker                       //
	Podman                       // podman / libpod, incl. conmon
	Containerd                   // cri-containerd-*, nerdctl-*
	CRIO                         //
	Kubernetes                   // cgroupfs kubepods, CRI runtime unknown
	LXC                          // LXC, LXD, Incus
	Nspawn                       // systemd-nspawn@NAME.service
	Machine                      // machined: machine-NAME.scope
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
	Conmon         ContainerFlags = 1 << 0 // the runtime's monitor (conmon)
	InKubernetes   ContainerFlags = 1 << 1 // under kubepods
	Rootless       ContainerFlags = 1 << 2 // inside user@UID.service
	MonitorProcess ContainerFlags = 1 << 3 // lxc.monitor.*
)

var containerFlagNames = []struct {
	f    ContainerFlags
	name string
}{{Conmon, "conmon"}, {InKubernetes, "kubernetes"}, {Rootless, "rootless"}, {MonitorProcess, "monitor"}}

// String lists the flags, comma-separated, "-" for none.
func (f ContainerFlags) String() string {
	var s []string
	for _, n := range containerFlagNames {
		if f&n.f != 0 {
			s = append(s, n.name)
		}
	}
	if len(s) == 0 {
		return "-"
	}
	return strings.Join(s, ",")
}

// Container is what Classify found in a cgroup path.
type Container struct {
	Runtime Runtime
	Flags   ContainerFlags
	UID     int64 // owner from "user-UID.slice", or -1
	// Container id (64 hex) or name (LXC, machine, nspawn; systemd \xNN
	// escapes undone); for services and sessions the unit; "" if none.
	ID  string
	Pod string // Kubernetes pod UID (dashes restored) or podman pod id
	QoS string // Kubernetes QoS class: "guaranteed", "burstable", "besteffort"
}

const (
	maxPathLen  = 65536
	maxNameLen  = 255 // kernfs names are at most NAME_MAX bytes
	nameSize    = 256 // PEERCGROUP_NAME_SIZE
	podSize     = 72
	hex64Length = 64
)

type idFormat int

const (
	idHex64 idFormat = iota // exactly 64 lowercase hex digits
	idName                  // any non-empty name
	idUnit                  // systemd-escaped name (\xNN), unescaped
	idNone                  // nothing may follow the prefix
)

type rule struct {
	parent string // required parent component; "" with anyParent
	any    bool
	prefix string
	suffix string
	fmt    idFormat
	rt     Runtime
	flags  ContainerFlags
}

// Order matters: a longer prefix must precede the prefix it extends.
var rules = []rule{
	{"", true, "docker-", ".scope", idHex64, Docker, 0},
	{"docker", false, "", "", idHex64, Docker, 0},
	{"", true, "libpod-conmon-", ".scope", idHex64, Podman, Conmon},
	{"", true, "libpod-", ".scope", idHex64, Podman, 0},
	{"libpod_parent", false, "libpod-conmon-", "", idHex64, Podman, Conmon},
	{"libpod_parent", false, "libpod-", "", idHex64, Podman, 0},
	{"libpod_parent", false, "conmon", "", idNone, Podman, Conmon},
	{"", true, "cri-containerd-", ".scope", idHex64, Containerd, 0},
	{"", true, "nerdctl-", ".scope", idHex64, Containerd, 0},
	{"", true, "crio-conmon-", ".scope", idHex64, CRIO, Conmon},
	{"", true, "crio-", ".scope", idHex64, CRIO, 0},
	{"", true, "lxc.payload.", "", idName, LXC, 0},
	{"", true, "lxc.monitor.", "", idName, LXC, MonitorProcess},
	{"lxc", false, "", "", idName, LXC, 0},
	{"", true, "systemd-nspawn@", ".service", idUnit, Nspawn, 0},
	{"machine.slice", false, "machine-", ".scope", idUnit, Machine, 0},
}

func isHex64(s string) bool {
	if len(s) != hex64Length {
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

// copyName undoes systemd's \xNN escapes if unit; ok is false if the
// result would be empty, contain NUL or '/', or not fit in size bytes
// with its NUL.
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

func (r *rule) match(parent, c string, out *Container) bool {
	if !r.any && parent != r.parent {
		return false
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
		name, ok := copyName(id, nameSize, r.fmt == idUnit)
		if !ok {
			return false
		}
		out.ID = name
	}
	out.Runtime = r.rt
	out.Flags |= r.flags
	return true
}

// Kubernetes pod UID: the systemd driver writes '_' for '-'.
func setPodUID(out *Container, uid string) {
	if uid == "" || len(uid) >= podSize {
		return
	}
	b := []byte(uid)
	for i, c := range b {
		if c == '_' {
			c = '-'
		}
		if hexval(c) < 0 && c != '-' {
			return
		}
		b[i] = c
	}
	out.Pod = string(b)
}

// QoS and pod from "burstable", "pod<uid>" (cgroupfs) or from the dash
// separated words of "kubepods-burstable-pod<uid>.slice" (systemd).
func kubeContext(c string, out *Container) {
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
		} else if strings.HasPrefix(w, "pod") && len(w) > 3 {
			setPodUID(out, w[3:])
		}
		if !found {
			break
		}
		c = rest
	}
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
	if uid > 0xffffffff {
		return -1
	}
	return uid
}

// Classify classifies the cgroup path p (a leading '/' is optional).  The
// outermost container wins ("docker in kubepods" is docker).  A path that
// cannot be a cgroup path classifies as Unknown; ClassifyStrict tells it.
func Classify(p string) Container {
	c, _ := ClassifyStrict(p)
	return c
}

// ClassifyStrict is Classify that fails with ErrInvalidPath (EINVAL) for a
// path that cannot be a cgroup path: empty, NUL, "//", ".", "..", a name
// over 255 bytes, over 64 KiB.
func ClassifyStrict(p string) (Container, error) {
	out := Container{Runtime: Unknown, UID: -1}
	if len(p) == 0 || len(p) > maxPathLen || strings.IndexByte(p, 0) >= 0 {
		return out, &Error{"classify", unix.EINVAL}
	}
	p = strings.TrimPrefix(p, "/")
	if p == "" {
		out.Runtime = Host
		return out, nil
	}
	comps := strings.Split(p, "/")
	// Validate first, so that a bad path never yields a partial answer.
	for _, c := range comps {
		if c == "" || len(c) > maxNameLen || c == "." || c == ".." {
			return out, &Error{"classify", unix.EINVAL}
		}
	}

	var parent, unit, first string
	var kube, userSlice, found, haveUnit bool
	first = comps[0]
walk:
	for _, c := range comps {
		for i := range rules {
			if rules[i].match(parent, c, &out) {
				found = true
				break walk
			}
		}
		if isKubepods(c) {
			kube = true
		} else if kube {
			kubeContext(c, &out)
			// cgroupfs driver: /kubepods/<qos>/pod<uid>/<container id>
			if out.Pod != "" && isHex64(c) && strings.HasPrefix(parent, "pod") {
				out.ID = c
				out.Runtime = Kubernetes
				found = true
				break
			}
		}
		if c == "user.slice" && parent == "" {
			userSlice = true
		}
		if out.UID < 0 {
			if uid := sliceUID(c, "user-", ".slice"); uid >= 0 {
				out.UID = uid
			}
		}
		if sliceUID(c, "user@", ".service") >= 0 {
			out.Flags |= Rootless
		}
		// podman pods: machine-libpod_pod_<id>.slice, user-libpod_pod_<id>.slice
		if strings.HasSuffix(c, ".slice") {
			start, end := strings.Index(c, "libpod_pod_")+len("libpod_pod_"), len(c)-len(".slice")
			if start >= len("libpod_pod_") && start <= end && isHex64(c[start:end]) {
				out.Pod = c[start:end]
			}
		}
		if strings.HasSuffix(c, ".service") || strings.HasSuffix(c, ".scope") {
			unit, haveUnit = c, true
		}
		parent = c
	}

	if kube {
		out.Flags |= InKubernetes
		if out.Pod != "" && out.QoS == "" {
			out.QoS = "guaranteed" // no QoS level in the path
		}
		if !found {
			out.Runtime = Kubernetes
		}
		return out, nil
	}
	if found {
		return out, nil
	}

	// Not a container: only meaningful facts below, never a guess.
	out.Flags &^= Rootless
	out.Pod = ""
	if userSlice {
		out.Runtime = UserSession
	} else if haveUnit && (first == "system.slice" || first == "init.scope") {
		out.Runtime = SystemService
	}
	if out.Runtime != Unknown && haveUnit {
		if name, ok := copyName(unit, nameSize, false); ok {
			out.ID = name
		}
	}
	return out, nil
}
