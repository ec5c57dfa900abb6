import { request } from 'node:http';
request('http://127.0.0.1:44139/v1beta/accounts/1001', { headers: { authorization: 'Bearer tpk_mockAcmeLiveKey0000000000001' } }, (res) => res.pipe(process.stdout)).end();
