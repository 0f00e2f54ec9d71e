// A hosted Node.js bot (docs/hosted.md): a uniformly random legal index, stdio line protocol.
const readline = require("readline");
const rl = readline.createInterface({ input: process.stdin });
rl.on("line", (line) => {
  const msg = JSON.parse(line);
  if (msg.type === "decision_request") {
    process.stdout.write(String(Math.floor(Math.random() * msg.num_actions)) + "\n");
  }
});
