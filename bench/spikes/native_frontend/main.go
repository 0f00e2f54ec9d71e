// Spike: what a native gRPC front-end costs per bot round trip on this machine.
//
//	spike --listen 127.0.0.1:0 [--gateway /path/to.sock]
//
// Without --gateway it echoes every message of every bidirectional stream (any method).
// With --gateway it forwards each message, framed as [len u32][stream u32][payload], over one
// Unix socket to a Python process and writes that process's answer back to the stream.
package main

import (
	"bufio"
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"

	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"
)

type rawCodec struct{}

func (rawCodec) Marshal(v interface{}) ([]byte, error) { return *(v.(*[]byte)), nil }
func (rawCodec) Unmarshal(data []byte, v interface{}) error {
	p := v.(*[]byte)
	*p = append((*p)[:0], data...)
	return nil
}
func (rawCodec) Name() string { return "proto" }

type gateway struct {
	mu      sync.Mutex
	w       *bufio.Writer
	pending chan struct{}
	streams sync.Map // uint32 -> chan []byte
	next    uint32
}

func (g *gateway) send(id uint32, payload []byte) {
	var hdr [8]byte
	binary.LittleEndian.PutUint32(hdr[0:], uint32(len(payload)))
	binary.LittleEndian.PutUint32(hdr[4:], id)
	g.mu.Lock()
	g.w.Write(hdr[:])
	g.w.Write(payload)
	g.mu.Unlock()
	select {
	case g.pending <- struct{}{}:
	default:
	}
}

func (g *gateway) flusher() {
	for range g.pending {
		g.mu.Lock()
		g.w.Flush()
		g.mu.Unlock()
	}
}

func (g *gateway) reader(r io.Reader) {
	br := bufio.NewReaderSize(r, 1<<16)
	var hdr [8]byte
	for {
		if _, err := io.ReadFull(br, hdr[:]); err != nil {
			os.Exit(0)
		}
		n := binary.LittleEndian.Uint32(hdr[0:])
		id := binary.LittleEndian.Uint32(hdr[4:])
		buf := make([]byte, n)
		if _, err := io.ReadFull(br, buf); err != nil {
			os.Exit(0)
		}
		if ch, ok := g.streams.Load(id); ok {
			ch.(chan []byte) <- buf
		}
	}
}

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address")
	sock := flag.String("gateway", "", "unix socket of the Python side")
	flag.Parse()
	encoding.RegisterCodec(rawCodec{})
	var g *gateway
	if *sock != "" {
		c, err := net.Dial("unix", *sock)
		if err != nil {
			panic(err)
		}
		g = &gateway{w: bufio.NewWriterSize(c, 1<<16), pending: make(chan struct{}, 1)}
		go g.flusher()
		go g.reader(c)
	}
	handler := func(srv interface{}, stream grpc.ServerStream) error {
		var id uint32
		var answers chan []byte
		if g != nil {
			id = atomic.AddUint32(&g.next, 1)
			answers = make(chan []byte, 4)
			g.streams.Store(id, answers)
			defer g.streams.Delete(id)
		}
		for {
			var b []byte
			if err := stream.RecvMsg(&b); err != nil {
				return nil
			}
			if g != nil {
				g.send(id, b)
				b = <-answers
			}
			if err := stream.SendMsg(&b); err != nil {
				return nil
			}
		}
	}
	s := grpc.NewServer(grpc.UnknownServiceHandler(handler))
	lis, err := net.Listen("tcp", *listen)
	if err != nil {
		panic(err)
	}
	fmt.Println(lis.Addr().String())
	os.Stdout.Sync()
	s.Serve(lis)
}
