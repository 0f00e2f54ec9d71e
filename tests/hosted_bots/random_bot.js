// A hosted Node.js bot (tests of issue 15): a uniformly random legal index, stdio line protocol.
const readline = require("readline");
const rl = readline.createInterface({ input: process.stdin });
rl.on("line", (line) => {
  const msg = JSON.parse(line);
  if (msg.type === "decision_request") {
    process.stdout.write(String(Math.floor(Math.random() * msg.num_actions)) + "\n");
  }
});
