// Load generator for the chat benchmark: `connections` WebSocket clients each
// send a message and wait for its answer, in a loop, for `seconds`. Prints
// the number of round trips as JSON.
import WebSocket from 'ws';

const [url, connections = '50', seconds = '5'] = process.argv.slice(2);
const until = Date.now() + Number(seconds) * 1000;
let roundTrips = 0;
let errors = 0;

async function client() {
  const socket = new WebSocket(url);
  await new Promise((done, fail) => {
    socket.once('open', done);
    socket.once('error', fail);
  });
  await new Promise((done, fail) => {
    const message = 'hello, berth';
    // A server that closes the connection (a limit) fails the run instead of leaving it waiting.
    socket.once('close', (code, reason) =>
      fail(new Error(`the server closed a connection (${code} ${reason.toString()})`)),
    );
    socket.on('message', (data) => {
      if (data.toString() === String(message.length)) roundTrips++;
      else errors++;
      if (Date.now() < until) socket.send(message);
      else {
        socket.removeAllListeners('close');
        done();
      }
    });
    socket.send(message);
  });
  socket.close();
}

await Promise.all(Array.from({ length: Number(connections) }, client));
console.log(JSON.stringify({ roundTrips, errors }));
