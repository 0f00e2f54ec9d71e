// A spike, not part of Parterre (docs/benchmarks.md "Session 10"): a native gRPC front end.
//
//	frontend [--listen 127.0.0.1:0] [--gateway /path/to.sock]
//
// Prints the address it listens on. Without --gateway it echoes every message of every
// bidirectional stream (any method). With --gateway it carries every stream to a Python
// process over one Unix socket, as frames [len u32][stream u32][kind u8][payload]:
//
//	to Python:   OPEN  (payload: the stream's metadata as JSON [[key, value], ...])
//	             MSG   (a message from the client, as bytes)
//	             HALF  (the client closed its side)
//	             GONE  (the stream failed or was cancelled)
//	from Python: MSG   (a message for the client)
//	             CLOSE (payload: [code u32][details]: end the stream with that status)
package main

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

const (
	kOpen  = 1
	kMsg   = 2
	kHalf  = 3
	kGone  = 4
	kClose = 5
)

type rawCodec struct{}

func (rawCodec) Marshal(v interface{}) ([]byte, error) { return *(v.(*[]byte)), nil }
func (rawCodec) Unmarshal(data []byte, v interface{}) error {
	p := v.(*[]byte)
	*p = append((*p)[:0], data...)
	return nil
}
func (rawCodec) Name() string { return "proto" }

type frame struct {
	kind    byte
	payload []byte
}

type gateway struct {
	mu      sync.Mutex
	w       *bufio.Writer
	pending chan struct{}
	streams sync.Map // uint32 -> chan frame
	next    uint32
}

func (g *gateway) send(id uint32, kind byte, payload []byte) {
	var hdr [9]byte
	binary.LittleEndian.PutUint32(hdr[0:], uint32(len(payload)))
	binary.LittleEndian.PutUint32(hdr[4:], id)
	hdr[8] = kind
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
	var hdr [9]byte
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
			ch.(chan frame) <- frame{hdr[8], buf}
		}
	}
}

func (g *gateway) serve(stream grpc.ServerStream) error {
	id := atomic.AddUint32(&g.next, 1)
	out := make(chan frame, 1024) // a spike: a client that stops reading blocks this socket's reader
	g.streams.Store(id, out)
	defer g.streams.Delete(id)
	md, _ := metadata.FromIncomingContext(stream.Context())
	pairs := [][2]string{}
	for k, vs := range md {
		for _, v := range vs {
			pairs = append(pairs, [2]string{k, v})
		}
	}
	open, _ := json.Marshal(pairs)
	g.send(id, kOpen, open)
	go func() {
		for {
			var b []byte
			if err := stream.RecvMsg(&b); err != nil {
				if err == io.EOF {
					g.send(id, kHalf, nil)
				} else {
					g.send(id, kGone, nil)
				}
				return
			}
			g.send(id, kMsg, b)
		}
	}()
	for {
		select {
		case f := <-out:
			if f.kind == kClose {
				code := codes.Code(binary.LittleEndian.Uint32(f.payload))
				if code == codes.OK {
					return nil
				}
				return status.Error(code, string(f.payload[4:]))
			}
			if err := stream.SendMsg(&f.payload); err != nil {
				g.send(id, kGone, nil)
				return err
			}
		case <-stream.Context().Done():
			g.send(id, kGone, nil)
			return stream.Context().Err()
		}
	}
}

func echo(srv interface{}, stream grpc.ServerStream) error {
	for {
		var b []byte
		if err := stream.RecvMsg(&b); err != nil {
			return nil
		}
		if err := stream.SendMsg(&b); err != nil {
			return nil
		}
	}
}

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address")
	sock := flag.String("gateway", "", "unix socket of the Python side")
	flag.Parse()
	encoding.RegisterCodec(rawCodec{})
	handler := echo
	if *sock != "" {
		c, err := net.Dial("unix", *sock)
		if err != nil {
			panic(err)
		}
		g := &gateway{w: bufio.NewWriterSize(c, 1<<16), pending: make(chan struct{}, 1)}
		go g.flusher()
		go g.reader(c)
		handler = func(srv interface{}, stream grpc.ServerStream) error { return g.serve(stream) }
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
