// Answers with the body of a GET of its input (a URL): a trial that waits on a server.
import { get } from 'node:http';

export default (input) =>
  new Promise((resolve, reject) =>
    get(input, (res) => {
      let body = '';
      res
        .setEncoding('utf8')
        .on('data', (d) => (body += d))
        .on('end', () => resolve(body));
    }).on('error', reject),
  );
