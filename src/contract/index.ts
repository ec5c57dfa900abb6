export * from './apiKeys';
export * from './endpoints';
export * from './errors';
export * from './loginLinks';
export * from './requests';
export * from './resources';
export * from './rules';
export * from './uploads';
