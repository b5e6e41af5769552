// SPDX-License-Identifier: LGPL-2.1-or-later

package peercgroup

import (
	"context"
	"net"

	"golang.org/x/sys/unix"
)

// Peer is what a server learns about the other end of an accepted
// connection: the module's record, its classification, or why neither.
type Peer struct {
	Info      Info
	Container Container // ClassifyPeer(Info); Unknown, UID -1, if Err != nil
	Err       error
}

// noPeer is the Peer of a connection the module could not answer for: its
// Container says nothing, and no owner (uid 0 would name root).
func noPeer(err error) *Peer {
	return &Peer{Container: Container{Runtime: Unknown, UID: -1}, Err: err}
}

func peerOf(c *net.UnixConn) *Peer {
	info, err := Get(c)
	if err != nil {
		return noPeer(err)
	}
	return &Peer{Info: info, Container: ClassifyPeer(info)}
}

// Listener wraps a *net.UnixListener: Accept asks the module about each
// connection once, as soon as it is accepted, and returns a *Conn.
type Listener struct {
	*net.UnixListener
}

// NewListener wraps l.
func NewListener(l *net.UnixListener) *Listener { return &Listener{l} }

// Conn is an accepted connection with its peer's record.
type Conn struct {
	*net.UnixConn
	Peer *Peer
}

// Accept implements net.Listener.
func (l *Listener) Accept() (net.Conn, error) {
	c, err := l.AcceptUnix()
	if err != nil {
		return nil, err
	}
	return &Conn{c, peerOf(c)}, nil
}

type peerKey struct{}

// ConnContext is for http.Server.ConnContext: it puts the caller's Peer
// into the context of every request on c.  c comes from a Listener (the
// record already taken) or a plain *net.UnixListener.  Read it back with
// PeerFromContext.
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	var p *Peer
	switch c := c.(type) {
	case *Conn:
		p = c.Peer
	case *net.UnixConn:
		p = peerOf(c)
	default:
		p = noPeer(&Error{"get", unix.EAFNOSUPPORT})
	}
	return context.WithValue(ctx, peerKey{}, p)
}

// PeerFromContext returns the Peer that ConnContext stored, or nil.
func PeerFromContext(ctx context.Context) *Peer {
	p, _ := ctx.Value(peerKey{}).(*Peer)
	return p
}
