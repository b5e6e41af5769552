// SPDX-License-Identifier: LGPL-2.1-or-later

package peercgroup

import (
	"context"
	"net"
	"testing"
)

// A connection the module cannot answer for names no owner: the zero
// Container's UID, 0, would be root's.
func TestConnContextWithoutAnswer(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	p := PeerFromContext(ConnContext(context.Background(), a))
	if p == nil || p.Err == nil {
		t.Fatalf("peer %+v: want an error", p)
	}
	if p.Container.Runtime != Unknown || p.Container.UID != -1 {
		t.Errorf("container %+v, want Unknown with UID -1", p.Container)
	}
	if want := Classify(""); p.Container.UID != want.UID {
		t.Errorf("UID %d, Classify's empty answer has %d", p.Container.UID, want.UID)
	}
}
