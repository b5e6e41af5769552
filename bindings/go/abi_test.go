// SPDX-License-Identifier: LGPL-2.1-or-later

package peercgroup

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"unsafe"
)

// projectFile finds a file of the project tree from this directory
// (bindings/go), or from PEERCGROUP_SRC when the tests run elsewhere.
func projectFile(t *testing.T, rel string) string {
	t.Helper()
	root := os.Getenv("PEERCGROUP_SRC")
	if root == "" {
		root = filepath.Join("..", "..")
	}
	p := filepath.Join(root, rel)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%s: %v (set PEERCGROUP_SRC to the source tree)", rel, err)
	}
	return p
}

// The numbers of abi.go are those of the uapi header.
func TestABIMatchesHeader(t *testing.T) {
	text, err := os.ReadFile(projectFile(t, "include/uapi/linux/peercgroup.h"))
	if err != nil {
		t.Fatal(err)
	}
	defs := map[string]uint64{}
	re := regexp.MustCompile(`(?m)^#define\s+(PEERCGROUP_\w+)\s+\(?(0x[0-9A-Fa-f]+|\d+)(?:U|ULL)?\s*(?:<<\s*(\d+)\)?)?`)
	for _, m := range re.FindAllStringSubmatch(string(text), -1) {
		v, err := strconv.ParseUint(m[2], 0, 64)
		if err != nil {
			t.Fatal(err)
		}
		if m[3] != "" {
			s, _ := strconv.Atoi(m[3])
			v <<= s
		}
		defs[m[1]] = v
	}
	want := map[string]uint64{
		"PEERCGROUP_ABI_VERSION":           abiVersion,
		"PEERCGROUP_QUERY_NO_PATH":         queryNoPath,
		"PEERCGROUP_RESULT_CGROUP_REMOVED": resultCgroupRemoved,
		"PEERCGROUP_RESULT_PEER_EXITED":    resultPeerExited,
		"PEERCGROUP_QUERY_SIZE_VER0":       querySize,
		"PEERCGROUP_VERSION_SIZE_VER0":     versionSize,
		"PEERCGROUP_IOC_MAGIC":             iocMagic,
		"PEERCGROUP_VERSION_STRING_SIZE":   versionStringSize,
	}
	for name, v := range want {
		got, ok := defs[name]
		if !ok {
			t.Errorf("%s not found in the header", name)
		} else if got != v {
			t.Errorf("%s: header says %d, abi.go %d", name, got, v)
		}
	}
	if n := unsafe.Sizeof(rawQuery{}); n != querySize {
		t.Errorf("sizeof(rawQuery) = %d, want %d", n, querySize)
	}
	if n := unsafe.Sizeof(rawVersion{}); n != versionSize {
		t.Errorf("sizeof(rawVersion) = %d, want %d", n, versionSize)
	}
	if unsafe.Offsetof(rawQuery{}.Path) != 16 || unsafe.Offsetof(rawQuery{}.CgroupID) != 24 ||
		unsafe.Offsetof(rawQuery{}.PathLen) != 32 || unsafe.Offsetof(rawVersion{}.ModuleVersion) != 24 {
		t.Error("struct layout differs from the header's")
	}
	// PATH_MAX, which the header's ENAMETOOLONG bounds every path by.
	if pathMax != 4096 {
		t.Errorf("pathMax = %d, want Linux's PATH_MAX 4096", pathMax)
	}
	if b, err := os.ReadFile("/usr/include/linux/limits.h"); err == nil {
		if m := regexp.MustCompile(`(?m)^#define\s+PATH_MAX\s+(\d+)`).FindSubmatch(b); m == nil || string(m[1]) != strconv.Itoa(pathMax) {
			t.Errorf("<linux/limits.h> PATH_MAX %q, pathMax %d", m, pathMax)
		}
	}
	// _IOWR on x86_64 and arm64: dir 3 in bits 30-31, size 16-29.
	if iocQuery != 0xC030C601 || iocVersion != 0xC038C602 {
		t.Errorf("ioctl numbers %#x %#x", iocQuery, iocVersion)
	}
}

func TestVersionMatchesProject(t *testing.T) {
	b, err := os.ReadFile(projectFile(t, "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	if v := string(regexp.MustCompile(`\s+`).ReplaceAll(b, nil)); v != Version {
		t.Errorf("VERSION says %q, version.go %q: update version.go", v, Version)
	}
}
